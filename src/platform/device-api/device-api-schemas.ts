import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { AckEntry } from '../commands/command-schemas.js'
import { DeviceRecord } from '../devices/device-record.js'
import { JsonObject, Millis } from '../platform-schemas.js'

const Short = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }))

/** Other fields a device sends are ignored, so firmware may report more than this. */
export const HeartbeatBody = Type.Object({
  device_id: Id('Device id'),
  firmware_version: Short('Firmware version'),
  ip: Short('Address of the device; default: the connection peer'),
  model: Short('Model'),
  uptime_s: Type.Optional(Type.Number({ description: 'Seconds since boot' })),
  rssi: Type.Optional(Type.Number({ description: 'Signal strength, dBm' })),
})

export const HeartbeatAnswer = Type.Object({
  success: Type.Boolean(),
  server_time: Millis('Server time'),
  pending_commands: Type.Integer({ description: 'Commands a poll would return now' }),
})

export const DeviceInfoAnswer = Type.Object({ success: Type.Boolean(), device: DeviceRecord })

export const PollQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 10, description: 'Default 10; above 50 is served as 50' })),
})

export const PolledCommand = Type.Object({
  id: Type.Integer(),
  action: Type.String(),
  params: JsonObject,
  created_at: Millis('Queued'),
  attempt: Type.Integer({ description: '1 on first delivery; higher when delivered again' }),
})

export const PollAnswer = Type.Object({ success: Type.Boolean(), commands: Type.Array(PolledCommand) })

export const AckBody = Type.Union([
  AckEntry,
  Type.Object({ acks: Type.Array(AckEntry, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false }),
])

export const AckAnswer = Type.Object({
  success: Type.Boolean(),
  acked: Type.Integer(),
  duplicate: Type.Boolean({ description: 'True when an acknowledged command had been acknowledged before (nothing changed for it)' }),
  duplicate_ids: Type.Array(Type.Integer()),
})

export const TimeAnswer = Type.Object({ success: Type.Boolean(), timestamp: Millis('Server time'), iso: Type.String() })

export const TimeSyncBody = Type.Object(
  { device_time: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Device clock when sending (ms since epoch)' }) },
  { additionalProperties: false },
)

export const TimeSyncAnswer = Type.Object({
  success: Type.Boolean(),
  device_time: Millis('As sent'),
  server_receive_time: Millis('Request received'),
  server_send_time: Millis('Answer sent'),
  offset_ms: Type.Integer({ description: 'server_receive_time − device_time: add to the device clock (ignores transit time)' }),
})

export const OtaQuery = Type.Object({
  device_id: Id('Device id'),
  version: Type.String({ minLength: 1, maxLength: 64, description: 'Running image version (integer) or display version (semver)' }),
  hw_version: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
})

export const OtaAnswer = Type.Object({
  success: Type.Boolean(),
  update: Type.Boolean(),
  release: Type.Optional(
    Type.Object({
      release_id: Type.String(),
      image_version: Type.Integer(),
      display_version: Type.String(),
      size: Type.Integer(),
      sha256: Type.String(),
      crc32: Type.String(),
      url: Type.String({ description: 'Where to download the image (supports Range)' }),
    }),
  ),
})
