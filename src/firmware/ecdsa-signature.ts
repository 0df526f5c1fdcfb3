import { verify, type KeyObject } from 'node:crypto'

const DER_SEQUENCE = 0x30

/** Total size (tag and length included) of the DER SEQUENCE that `bytes` starts with, if it fits. */
function derSequenceSize(bytes: Uint8Array): number | undefined {
  if (bytes.length < 2 || bytes[0] !== DER_SEQUENCE) return undefined
  const first = bytes[1]
  let length: number
  let headerSize: number
  if (first < 0x80) {
    length = first
    headerSize = 2
  } else if (first === 0x81 && bytes.length >= 3) {
    length = bytes[2]
    headerSize = 3
  } else if (first === 0x82 && bytes.length >= 4) {
    length = (bytes[2] << 8) | bytes[3]
    headerSize = 4
  } else {
    return undefined
  }
  const size = headerSize + length
  return size <= bytes.length ? size : undefined
}

/**
 * The DER signature without the zero bytes `imgtool --pad-sig` appends to reach a fixed
 * length; undefined when `signature` is not a DER SEQUENCE followed only by zeros.
 */
export function stripSignaturePadding(signature: Buffer): Buffer | undefined {
  const size = derSequenceSize(signature)
  if (size === undefined) return undefined
  for (let i = size; i < signature.length; i++) if (signature[i] !== 0) return undefined
  return signature.subarray(0, size)
}

/**
 * Whether `signature` (DER, zero padding allowed) is an ECDSA/SHA-256 signature of `data`
 * by `key`. Never throws: a malformed signature or unusable key is simply not valid.
 */
export function verifyEcdsaSha256(data: Uint8Array, signature: Buffer, key: KeyObject): boolean {
  const der = stripSignaturePadding(signature)
  if (!der) return false
  try {
    return verify('sha256', data, { key, dsaEncoding: 'der' }, der)
  } catch {
    return false
  }
}
