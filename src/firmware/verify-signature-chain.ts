import { createHash, createPublicKey, type KeyObject } from 'node:crypto'
import { stripSignaturePadding, verifyEcdsaSha256 } from './ecdsa-signature.js'
import { findTlv } from './find-tlv.js'
import { isP256Key, keyFingerprint } from './firmware-keys.js'
import type { McubootImage } from './mcuboot-image.js'
import type { ReleaseChecks } from './release-checks.js'
import { describeTlv } from './tlv-type.js'

const SIGNED_PART = 'header + payload + protected TLV area'

function checkImageHash(checks: ReleaseChecks, signedBytes: Buffer, image: McubootImage): void {
  const tlv = findTlv(image, 'SHA256')
  if (!tlv.ok) return checks.record('image_hash', [tlv.reason])
  const actual = createHash('sha256').update(signedBytes).digest()
  if (tlv.value.length !== actual.length) {
    return checks.record('image_hash', [`${describeTlv('SHA256')} TLV is ${tlv.value.length} bytes, expected 32`])
  }
  checks.record('image_hash', tlv.value.equals(actual) ? [] : [`${describeTlv('SHA256')} TLV does not match the SHA-256 of ${SIGNED_PART}`])
}

function readSigningKey(der: Buffer): { key?: KeyObject; reason?: string } {
  let key: KeyObject
  try {
    key = createPublicKey({ key: der, format: 'der', type: 'spki' })
  } catch {
    return { reason: `${describeTlv('PUBKEY')} TLV is not a DER SubjectPublicKeyInfo public key` }
  }
  if (!isP256Key(key)) {
    const found = [key.asymmetricKeyType, key.asymmetricKeyDetails?.namedCurve].filter(Boolean).join(' ')
    return { reason: `${describeTlv('PUBKEY')} TLV is not an ECDSA P-256 key (found ${found || 'an unknown key type'})` }
  }
  return { key }
}

function checkSignerCert(checks: ReleaseChecks, image: McubootImage, pubkeyDer: Buffer | undefined, rootKey: KeyObject): void {
  const cert = findTlv(image, 'SIGNER_CERT')
  if (!cert.ok) return checks.record('signer_cert', [cert.reason])
  if (!pubkeyDer) return checks.skip('signer_cert', 'needs the PUBKEY TLV')
  if (!isP256Key(rootKey)) return checks.record('signer_cert', ['the root key (FIRMWARE_ROOT_PUBKEY) is not an ECDSA P-256 key'])
  if (!stripSignaturePadding(cert.value)) {
    return checks.record('signer_cert', [`${describeTlv('SIGNER_CERT')} TLV is not a DER signature (optionally followed by zero bytes)`])
  }
  const certified = verifyEcdsaSha256(pubkeyDer, cert.value, rootKey)
  checks.record('signer_cert', certified ? [] : [
    `${describeTlv('SIGNER_CERT')} is not the root key's signature over the PUBKEY bytes: the signing key is not certified by FIRMWARE_ROOT_PUBKEY`,
  ])
}

function checkImageSignature(checks: ReleaseChecks, signedBytes: Buffer, image: McubootImage, signingKey: KeyObject | undefined): void {
  const signature = findTlv(image, 'ECDSA_SIG')
  if (!signature.ok) return checks.record('signature', [signature.reason])
  if (!signingKey) return checks.skip('signature', 'needs a valid PUBKEY TLV')
  if (!stripSignaturePadding(signature.value)) {
    return checks.record('signature', [`${describeTlv('ECDSA_SIG')} TLV is not a DER signature (optionally followed by zero bytes)`])
  }
  const valid = verifyEcdsaSha256(signedBytes, signature.value, signingKey)
  checks.record('signature', valid ? [] : [`${describeTlv('ECDSA_SIG')} does not verify with PUBKEY over ${SIGNED_PART}`])
}

/**
 * The cryptographic half of contract §6: SHA256 TLV, PUBKEY, SIGNER_CERT (root → signing
 * key) and ECDSA_SIG (signing key → image). `bytes` is the whole file `image` was parsed from.
 * A signing key whose fingerprint is in `revokedKeys` fails the chain.
 */
export function verifySignatureChain(checks: ReleaseChecks, bytes: Buffer, image: McubootImage, rootKey: KeyObject, revokedKeys: ReadonlySet<string> = new Set()): void {
  const signedBytes = bytes.subarray(image.signed.start, image.signed.end)
  checkImageHash(checks, signedBytes, image)

  const pubkey = findTlv(image, 'PUBKEY')
  const signingKey = pubkey.ok ? readSigningKey(pubkey.value) : { reason: pubkey.reason }
  const fingerprint = pubkey.ok ? keyFingerprint(pubkey.value) : undefined
  const revoked = fingerprint !== undefined && revokedKeys.has(fingerprint) ? `the signing key ${fingerprint} is revoked (FIRMWARE_REVOKED_KEYS)` : undefined
  checks.record('signing_key', signingKey.reason ? [signingKey.reason] : revoked ? [revoked] : [])

  checkSignerCert(checks, image, pubkey.ok ? pubkey.value : undefined, rootKey)
  checkImageSignature(checks, signedBytes, image, signingKey.key)
}
