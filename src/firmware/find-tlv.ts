import type { McubootImage } from './mcuboot-image.js'
import { describeTlv, TLV_TYPE, type TlvName } from './tlv-type.js'

/**
 * Where contract §6 puts each TLV fleetgate reads. PRODUCT_INFO must be signed, so it
 * must be protected; SIGNER_CERT may be in either area (imgtool --custom-tlv makes it
 * protected, it needs no protection of its own).
 */
const TLV_AREA: Record<TlvName, 'protected' | 'unprotected' | 'either'> = {
  PUBKEY: 'unprotected',
  SHA256: 'unprotected',
  ECDSA_SIG: 'unprotected',
  SIGNER_CERT: 'either',
  PRODUCT_INFO: 'protected',
}

export type FoundTlv = { ok: true; value: Buffer } | { ok: false; reason: string }

/**
 * The value of the one TLV of that type. More than one (in either area) is refused rather
 * than guessing which one a device or bootloader would read.
 */
export function findTlv(image: McubootImage, name: TlvName): FoundTlv {
  const type = TLV_TYPE[name]
  const inProtected = image.protectedTlvs.filter((tlv) => tlv.type === type)
  const inUnprotected = image.unprotectedTlvs.filter((tlv) => tlv.type === type)
  const area = TLV_AREA[name]
  const all = [...inProtected, ...inUnprotected]
  if (all.length > 1) return { ok: false, reason: `image has ${all.length} ${describeTlv(name)} TLVs; exactly one is allowed` }
  if (all.length === 0) {
    const where = area === 'either' ? 'image' : `${area} TLV area`
    return { ok: false, reason: `${describeTlv(name)} TLV is missing from the ${where}` }
  }
  const foundIn = inProtected.length === 1 ? 'protected' : 'unprotected'
  if (area !== 'either' && foundIn !== area) {
    return { ok: false, reason: `${describeTlv(name)} TLV is in the ${foundIn} TLV area; it must be in the ${area} one` }
  }
  return { ok: true, value: all[0].value }
}
