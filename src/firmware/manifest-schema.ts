import { Type, type Static } from '@sinclair/typebox'
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import { isIdentifier } from '@fleetgate/device-agent/protocol'

// Each `description` completes the sentence "manifest.<field> must be …" in rejection reasons.

const ISO_8601_UTC = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]00:?00)$'

const count = (what: string) => Type.Integer({ minimum: 0, description: `a non-negative integer (${what})` })

/** PRODUCT_INFO (TLV 0x00A1) and the manifest's `product`: the two must be equal. */
export const ProductInfoSchema = Type.Object(
  {
    magic: Type.String({ description: 'a string (product magic)' }),
    hw_version: count('hardware version'),
    fw_version: count('firmware version'),
    git_sha: Type.String({ description: 'a string (source revision)' }),
    timestamp: Type.String({ pattern: ISO_8601_UTC, description: 'an ISO 8601 UTC date-time such as 2024-05-01T12:00:00Z' }),
  },
  { description: 'an object {magic, hw_version, fw_version, git_sha, timestamp}' },
)
export type ProductInfo = Static<typeof ProductInfoSchema>

/** The seed's firmware manifest, served as `/api/v1/firmware/slave/manifest.json`. */
export const FirmwareManifestSchema = Type.Object(
  {
    release: Type.String({ description: 'a release id: 1–64 of A–Z a–z 0–9 . _ : -, not . or ..' }),
    image_version: Type.Integer({
      minimum: 0,
      maximum: 0xffff_ffff,
      description: 'an integer from 0 to 4294967295 (the image header build_num)',
    }),
    display_version: Type.String({ minLength: 1, description: 'a non-empty string starting with major.minor.revision' }),
    system: Type.Object(
      {
        offset: count('byte offset of the image'),
        length: count('image size in bytes'),
        sha256: Type.String({ pattern: '^[0-9A-Fa-f]{64}$', description: '64 hex digits (SHA-256 of the image file)' }),
        crc32: Type.String({
          pattern: '^(0[xX])?[0-9A-Fa-f]{8}$',
          description: '8 hex digits, 0x allowed (CRC-32 IEEE of the image file)',
        }),
      },
      { description: 'an object {offset, length, sha256, crc32}' },
    ),
    product: ProductInfoSchema,
  },
  { description: 'a JSON object' },
)
export type FirmwareManifest = Static<typeof FirmwareManifestSchema>

const fieldName = (path: string) => (path === '' ? 'manifest' : `manifest${path.replaceAll('/', '.')}`)

/**
 * Why `value` is not a well-formed manifest (contract §6: shape, types, release id format);
 * empty when it is. One reason per faulty field.
 */
export function checkManifestShape(value: unknown): string[] {
  const reasons = new Map<string, string>()
  for (const error of Value.Errors(FirmwareManifestSchema, value)) {
    if (reasons.has(error.path)) continue
    const missing = error.type === ValueErrorType.ObjectRequiredProperty
    const description = typeof error.schema.description === 'string' ? error.schema.description : 'well-formed'
    reasons.set(error.path, missing ? `${fieldName(error.path)} is missing` : `${fieldName(error.path)} must be ${description}`)
  }
  const release = (value as { release?: unknown } | null)?.release
  if (typeof release === 'string') {
    const reason = `manifest.release ${JSON.stringify(release.slice(0, 80))} is not a valid release id (1–64 of A–Z a–z 0–9 . _ : -, not . or ..)`
    if (!isIdentifier(release)) reasons.set('/release', reason)
  }
  return [...reasons.values()]
}
