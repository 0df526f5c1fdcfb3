import { createHash } from 'node:crypto'
import { crc32Hex } from '@fleetgate/device-agent/lib'
import type { FirmwareManifest, ProductInfo } from './manifest-schema.js'

export interface ManifestFields {
  release: string
  image_version: number
  display_version: string
  product: ProductInfo
}

/** The manifest of a finished image: `system` describes the whole file (offset 0). */
export function buildManifest(image: Uint8Array, fields: ManifestFields): FirmwareManifest {
  return {
    release: fields.release,
    image_version: fields.image_version,
    display_version: fields.display_version,
    system: {
      offset: 0,
      length: image.length,
      sha256: createHash('sha256').update(image).digest('hex'),
      crc32: crc32Hex(image),
    },
    product: { ...fields.product },
  }
}
