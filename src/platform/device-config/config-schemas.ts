import { Type, type Static } from '@sinclair/typebox'
import { JsonObject, Millis, Nullable } from '../platform-schemas.js'

/** Contract §7: a configuration is at most 64 KiB of JSON. */
export const MAX_CONFIG_BYTES = 64 * 1024

export const ConfigBody = Type.Object(
  {
    config: JsonObject,
    version: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The version this change is based on; stale → 409' }),
    ),
  },
  { additionalProperties: false },
)

export const DeviceConfig = Type.Object({
  config: JsonObject,
  version: Type.Integer({ description: '0 when never configured; each POST adds 1' }),
  updated_at: Nullable(Millis('Last change; null when never configured')),
})
export type DeviceConfig = Static<typeof DeviceConfig>

export const ConfigAnswer = Type.Composite([Type.Object({ success: Type.Boolean() }), DeviceConfig])
