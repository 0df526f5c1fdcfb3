/** The MCUboot TLV types fleetgate reads (contract §6); every other type is ignored. */
export const TLV_TYPE = {
  PUBKEY: 0x0002,
  SHA256: 0x0010,
  ECDSA_SIG: 0x0022,
  SIGNER_CERT: 0x00a0,
  PRODUCT_INFO: 0x00a1,
} as const

export type TlvName = keyof typeof TLV_TYPE

/** `PUBKEY (0x0002)`: how reasons name a TLV. */
export const describeTlv = (name: TlvName): string => `${name} (0x${TLV_TYPE[name].toString(16).padStart(4, '0')})`
