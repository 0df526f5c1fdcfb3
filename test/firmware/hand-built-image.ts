/**
 * An MCUboot image builder independent of src/: it writes every byte of contract §6 by
 * hand with Buffer writes and node:crypto, so a bug shared by signImage and the parser
 * cannot hide. Tests use it to place, pad, reorder or corrupt TLVs at will.
 */
import { createHash, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'

export interface HandKeys {
  rootPrivate: KeyObject
  rootPublic: KeyObject
  signingPrivate: KeyObject
  /** The signing key's SubjectPublicKeyInfo DER: the PUBKEY TLV. */
  signingSpki: Buffer
  /** The root's DER signature over `signingSpki`: the SIGNER_CERT TLV. */
  signerCert: Buffer
}

export function makeHandKeys(): HandKeys {
  const root = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const signingSpki = createPublicKey(signing.privateKey).export({ format: 'der', type: 'spki' })
  return {
    rootPrivate: root.privateKey,
    rootPublic: root.publicKey,
    signingPrivate: signing.privateKey,
    signingSpki,
    signerCert: sign('sha256', signingSpki, { key: root.privateKey, dsaEncoding: 'der' }),
  }
}

/** Symbolic TLVs the builder fills in, or a literal `{type, value}` TLV. */
export type HandTlv = 'product' | 'cert' | 'sha256' | 'pubkey' | 'sig' | { type: number; value: Buffer }

export interface HandImageOptions {
  keys: HandKeys
  payload?: Buffer
  version?: [major: number, minor: number, revision: number, build: number]
  headerSize?: number
  headerFill?: number
  product?: Record<string, unknown>
  protectedTlvs?: HandTlv[]
  unprotectedTlvs?: HandTlv[]
  /** Zero-pad SIGNER_CERT and ECDSA_SIG to 72 bytes, as `imgtool --pad-sig` does. */
  padSignatures?: boolean
  /** Bytes appended to ECDSA_SIG after any padding. */
  signatureSuffix?: Buffer
  release?: string
  displayVersion?: string
}

export const HAND_PRODUCT = { magic: 'PNPSLAVE', hw_version: 2, fw_version: 17, git_sha: 'deadbeef', timestamp: '2025-03-01T10:00:00Z' }

function bitwiseCrc32(bytes: Buffer): string {
  let crc = 0xffffffff
  for (const byte of bytes) {
    crc ^= byte
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1
  }
  return ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0')
}

const pad72 = (signature: Buffer) => Buffer.concat([signature, Buffer.alloc(72 - signature.length)])

function tlvArea(magic: number, tlvs: { type: number; value: Buffer }[]): Buffer {
  const parts = tlvs.map(({ type, value }) => {
    const head = Buffer.alloc(4)
    head.writeUInt16LE(type, 0)
    head.writeUInt16LE(value.length, 2)
    return Buffer.concat([head, value])
  })
  const body = Buffer.concat(parts)
  const info = Buffer.alloc(4)
  info.writeUInt16LE(magic, 0)
  info.writeUInt16LE(4 + body.length, 2)
  return Buffer.concat([info, body])
}

export function buildHandImage(options: HandImageOptions): { image: Buffer; manifest: Record<string, unknown> } {
  const { keys } = options
  const payload = options.payload ?? Buffer.from('hand-built payload '.repeat(20))
  const [major, minor, revision, build] = options.version ?? [2, 5, 300, 1234]
  const headerSize = options.headerSize ?? 32
  const product = options.product ?? HAND_PRODUCT
  const cert = options.padSignatures ? pad72(keys.signerCert) : keys.signerCert
  const literal = (tlv: HandTlv, signed?: Buffer) => {
    if (typeof tlv === 'object') return tlv
    if (tlv === 'product') return { type: 0x00a1, value: Buffer.from(JSON.stringify(product)) }
    if (tlv === 'cert') return { type: 0x00a0, value: cert }
    if (tlv === 'pubkey') return { type: 0x0002, value: keys.signingSpki }
    if (!signed) throw new Error(`${tlv} cannot be in the protected area`)
    if (tlv === 'sha256') return { type: 0x0010, value: createHash('sha256').update(signed).digest() }
    const signature = sign('sha256', signed, { key: keys.signingPrivate, dsaEncoding: 'der' })
    const value = options.padSignatures ? pad72(signature) : signature
    return { type: 0x0022, value: Buffer.concat([value, options.signatureSuffix ?? Buffer.alloc(0)]) }
  }

  const protectedTlvs = options.protectedTlvs ?? ['product', 'cert']
  const protectedArea = protectedTlvs.length > 0 ? tlvArea(0x6908, protectedTlvs.map((tlv) => literal(tlv))) : Buffer.alloc(0)

  const header = Buffer.alloc(headerSize, options.headerFill ?? 0)
  header.writeUInt32LE(0x96f3b83d, 0)
  header.writeUInt32LE(0, 4)
  header.writeUInt16LE(headerSize, 8)
  header.writeUInt16LE(protectedArea.length, 10)
  header.writeUInt32LE(payload.length, 12)
  header.writeUInt32LE(0, 16)
  header.writeUInt8(major, 20)
  header.writeUInt8(minor, 21)
  header.writeUInt16LE(revision, 22)
  header.writeUInt32LE(build, 24)
  header.writeUInt32LE(0, 28)

  const signed = Buffer.concat([header, payload, protectedArea])
  const unprotectedTlvs = options.unprotectedTlvs ?? ['sha256', 'pubkey', 'sig']
  const image = Buffer.concat([signed, tlvArea(0x6907, unprotectedTlvs.map((tlv) => literal(tlv, signed)))])
  return { image, manifest: handManifest(image, options, build, `${major}.${minor}.${revision}`, product) }
}

/** A manifest describing `image`: what an honest uploader would send. */
export function handManifest(
  image: Buffer,
  options: Pick<HandImageOptions, 'release' | 'displayVersion'>,
  build: number,
  version: string,
  product: Record<string, unknown>,
): Record<string, unknown> {
  return {
    release: options.release ?? `hand-${version}`,
    image_version: build,
    display_version: options.displayVersion ?? `${version} (build ${build})`,
    system: { offset: 0, length: image.length, sha256: createHash('sha256').update(image).digest('hex'), crc32: bitwiseCrc32(image) },
    product: { ...product },
  }
}

/** The manifest's `system` recomputed for changed bytes, so only the image checks can fail. */
export function withSystemOf(manifest: Record<string, unknown>, image: Buffer): Record<string, unknown> {
  return {
    ...manifest,
    system: { offset: 0, length: image.length, sha256: createHash('sha256').update(image).digest('hex'), crc32: bitwiseCrc32(image) },
  }
}
