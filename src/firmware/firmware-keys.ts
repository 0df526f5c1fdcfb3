import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'

/** Node's name for P-256 (secp256r1). */
const P256 = 'prime256v1'

export interface FirmwareKeyPair {
  privateKey: KeyObject
  publicKey: KeyObject
}

/**
 * The signature chain of contract §6: the root key (its public half is
 * `FIRMWARE_ROOT_PUBKEY`) certifies the signing key; the signing key signs images.
 */
export interface FirmwareKeySet {
  root: FirmwareKeyPair
  signing: FirmwareKeyPair
  /** The root's DER ECDSA-P256/SHA-256 signature over the signing key's SPKI DER (SIGNER_CERT TLV). */
  signerCert: Buffer
}

export const isP256Key = (key: KeyObject): boolean =>
  key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === P256

export const generateP256KeyPair = (): FirmwareKeyPair => generateKeyPairSync('ec', { namedCurve: P256 })

/** The DER SubjectPublicKeyInfo of a key (public, or the public half of a private key): the PUBKEY TLV. */
export const publicKeyDer = (key: KeyObject): Buffer =>
  (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'der', type: 'spki' })

/**
 * A signing key's fingerprint: the SHA-256 (lowercase hex) of its DER SubjectPublicKeyInfo, the
 * PUBKEY TLV's bytes. What FIRMWARE_REVOKED_KEYS lists (`openssl pkey -pubin -in signing.pub.pem -outform DER | sha256sum`).
 */
export const keyFingerprint = (spkiDer: Buffer): string => createHash('sha256').update(spkiDer).digest('hex')

/** The signer certificate: the root's DER signature over the signing key's SPKI DER. */
export const certifySigningKey = (rootPrivateKey: KeyObject, signingPublicKey: KeyObject): Buffer =>
  sign('sha256', publicKeyDer(signingPublicKey), { key: rootPrivateKey, dsaEncoding: 'der' })

export function generateFirmwareKeys(): FirmwareKeySet {
  const root = generateP256KeyPair()
  const signing = generateP256KeyPair()
  return { root, signing, signerCert: certifySigningKey(root.privateKey, signing.publicKey) }
}

/** PKCS#8 PEM, unencrypted. */
export const privateKeyPem = (key: KeyObject): string => key.export({ format: 'pem', type: 'pkcs8' }).toString()

/** SPKI PEM (`-----BEGIN PUBLIC KEY-----`). */
export const publicKeyPem = (key: KeyObject): string =>
  (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'pem', type: 'spki' }).toString()

/** Reads a P-256 private key from PEM (PKCS#8 or SEC1); throws when it is anything else. */
export function readPrivateKeyPem(pem: string | Buffer): KeyObject {
  const key = createPrivateKey(pem)
  if (!isP256Key(key)) throw new Error('not an ECDSA P-256 private key')
  return key
}

/** Reads a P-256 public key from PEM (an SPKI public key, or the public half of a private key). */
export function readPublicKeyPem(pem: string | Buffer): KeyObject {
  const key = createPublicKey(pem)
  if (!isP256Key(key)) throw new Error('not an ECDSA P-256 public key')
  return key
}
