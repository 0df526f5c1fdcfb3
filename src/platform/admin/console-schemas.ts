import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { BindStatus } from '../binding/bind-schemas.js'
import { CommandRecord } from '../commands/command-record.js'
import { DeviceConfig } from '../device-config/config-schemas.js'
import { DeviceRecord } from '../devices/device-record.js'
import { JsonObject, ListLimit } from '../platform-schemas.js'
import { LatestValues } from '../telemetry/telemetry-schemas.js'

export const MetaAnswer = Type.Object({
  success: Type.Boolean(),
  expressions: Type.Array(Type.String()),
  hid_keys: Type.Record(Type.String(), Type.Integer(), { description: 'Key name → USB HID usage id (keyboard page 0x07)' }),
  actions: Type.Array(Type.Object({ action: Type.String(), params: Type.Record(Type.String(), Type.Unknown(), { description: 'Param name → JSON Schema' }) })),
})

const StatusCounts = Type.Object({
  pending: Type.Integer(),
  delivered: Type.Integer(),
  done: Type.Integer(),
  failed: Type.Integer(),
  expired: Type.Integer(),
})

export const SummaryAnswer = Type.Object({
  success: Type.Boolean(),
  devices: Type.Object({ total: Type.Integer(), online: Type.Integer(), offline: Type.Integer() }),
  commands: StatusCounts,
  telemetry_24h: Type.Integer({ description: 'Telemetry points with a time in the last 24 hours' }),
  errors_24h: Type.Integer({ description: 'Device log entries of level error in the last 24 hours' }),
})

export const DeviceListQuery = Type.Object({
  limit: Type.Optional(ListLimit),
  after: Type.Optional(Id('Cursor: `next_after` of the previous page')),
})

export const DeviceListAnswer = Type.Object({
  success: Type.Boolean(),
  devices: Type.Array(DeviceRecord),
  next_after: Type.Optional(Type.String()),
})

export const DeviceDetailAnswer = Type.Object({
  success: Type.Boolean(),
  device: DeviceRecord,
  config: DeviceConfig,
  latest_telemetry: LatestValues,
  pending_commands: Type.Array(CommandRecord, { description: 'Queued commands (pending, delivered), oldest first, up to 100' }),
  bind: BindStatus,
})

export const AddDeviceBody = Type.Object(
  { device_id: Id('New device id'), model: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
)

export const AddDeviceAnswer = Type.Object({
  success: Type.Boolean(),
  device: DeviceRecord,
  device_token: Type.String({ description: 'Shown once: the device sends it as X-Device-Token' }),
})

export const TokenAnswer = Type.Object({ success: Type.Boolean(), device_token: Type.String({ description: 'Shown once; the old token stops working' }) })

export const CommandBody = Type.Object(
  { action: Type.String({ maxLength: 32 }), params: Type.Optional(JsonObject) },
  { additionalProperties: false, description: 'params as listed in meta.actions; may be omitted when an action takes none' },
)

export const ExpressionBody = Type.Object({ expression: Type.String({ maxLength: 64, description: 'One of meta.expressions' }) }, { additionalProperties: false })

export const CommandAnswer = Type.Object({ success: Type.Boolean(), command: CommandRecord })

export const CommandListAnswer = Type.Object({
  success: Type.Boolean(),
  commands: Type.Array(CommandRecord),
  next_before: Type.Optional(Type.Integer()),
})

export const CommandClearBody = Type.Union(
  [Type.Object({ device_id: Type.Optional(Id()), all: Type.Optional(Type.Boolean({ description: 'Also delete the history (done, failed, expired)' })) }, { additionalProperties: false }), Type.Null()],
  { description: 'No body or {}: every queued command' },
)

export const DeletedAnswer = Type.Object({ success: Type.Boolean(), deleted: Type.Integer() })
