/** Every check of contract §6 that `verifyRelease` runs, in order, with what it asserts. */
export const RELEASE_CHECKS = {
  manifest: 'manifest shape, types and release id',
  length: 'system.length equals the file size',
  sha256: 'system.sha256 equals the SHA-256 of the file',
  crc32: 'system.crc32 equals the CRC-32 (IEEE) of the file',
  layout: 'MCUboot header magic, sizes and TLV areas',
  image_hash: 'SHA256 TLV matches header + payload + protected TLV area',
  signing_key: 'PUBKEY TLV is an ECDSA P-256 public key, not revoked (FIRMWARE_REVOKED_KEYS)',
  signer_cert: "SIGNER_CERT is the root key's signature over PUBKEY",
  signature: 'ECDSA_SIG verifies with PUBKEY',
  image_version: 'image_version equals the header build_num',
  display_version: 'display_version starts with major.minor.revision',
  product_info: 'manifest product equals the PRODUCT_INFO TLV',
} as const

export type ReleaseCheckName = keyof typeof RELEASE_CHECKS

export interface ReleaseCheck {
  name: ReleaseCheckName
  /** `skipped`: an input it needs is already reported broken by an earlier check. */
  status: 'ok' | 'fail' | 'skipped'
  /** Why it failed (empty unless `fail`). */
  reasons: string[]
  /** Why it was skipped. */
  note?: string
}

/** Collects check outcomes so that every failing reason is reported, not just the first. */
export class ReleaseChecks {
  readonly list: ReleaseCheck[] = []

  record(name: ReleaseCheckName, reasons: string[]): void {
    this.list.push({ name, status: reasons.length === 0 ? 'ok' : 'fail', reasons })
  }

  skip(name: ReleaseCheckName, note: string): void {
    this.list.push({ name, status: 'skipped', reasons: [], note })
  }

  /** Every failure; should checks only have been skipped, why, so a rejection always says why. */
  get reasons(): string[] {
    const failures = this.list.flatMap((check) => check.reasons)
    if (failures.length > 0) return failures
    return this.list.filter((check) => check.status === 'skipped').map((check) => `${check.name}: ${check.note}`)
  }

  get ok(): boolean {
    return this.list.every((check) => check.status === 'ok')
  }
}
