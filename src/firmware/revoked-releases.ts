import type { Db } from '../storage/storage.js'
import { findTlv } from './find-tlv.js'
import { keyFingerprint } from './firmware-keys.js'
import { parseMcubootImage } from './mcuboot-image.js'
import { findImageBytes } from './release-repository.js'

/**
 * The stored releases signed by a revoked key (FIRMWARE_REVOKED_KEYS): no longer offered nor
 * served (manifest and image answer 404, the update check offers nothing, activation and
 * rollouts refuse them). Found once at start, by reading each stored image's PUBKEY TLV one
 * at a time, only when keys are revoked; a release uploaded later was checked at upload.
 */
export class RevokedReleases {
  private constructor(private readonly ids: ReadonlySet<string>) {}

  static readonly none = new RevokedReleases(new Set())

  static async load(db: Db, revokedKeys: ReadonlySet<string>): Promise<RevokedReleases> {
    if (revokedKeys.size === 0) return RevokedReleases.none
    const ids = new Set<string>()
    for (const { release_id } of await db.selectFrom('firmware_releases').select('release_id').execute()) {
      const bytes = await findImageBytes(db, release_id)
      const parsed = bytes && parseMcubootImage(bytes)
      if (!parsed || !parsed.ok) continue
      const pubkey = findTlv(parsed.image, 'PUBKEY')
      if (pubkey.ok && revokedKeys.has(keyFingerprint(pubkey.value))) ids.add(release_id)
    }
    return new RevokedReleases(ids)
  }

  has(releaseId: string): boolean {
    return this.ids.has(releaseId)
  }

  /** `release` unless it is revoked (for lookups that answer 404 / "no update" when nothing is there). */
  served<T extends { release_id: string }>(release: T | undefined): T | undefined {
    return release && !this.ids.has(release.release_id) ? release : undefined
  }
}
