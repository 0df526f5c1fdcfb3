import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'

/** Gateway usernames: configured ones (`A–Z a–z 0–9 . _ @ -`) and mini-program ones (`wechat_…`). */
export const Username = Type.String({ pattern: '^(?!\\.\\.?$)[A-Za-z0-9._@:-]{1,128}$', description: 'Gateway username' })

export const BindingParams = Type.Object({ username: Username, device_id: Id('Device id') })

export const BindingListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'Cursor: the next_after of the previous page' })),
  username: Type.Optional(Username),
  device_id: Type.Optional(Id('Only bindings of this device')),
})

export const Binding = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  user_id: Type.String(),
  device_id: Type.String(),
  created_at: Type.Number({ description: 'Seconds since epoch, fractional' }),
})

export const BindingList = Type.Object({
  success: Type.Boolean(),
  bindings: Type.Array(Binding),
  next_after: Type.Optional(Type.Integer()),
})

export const BindingDeleted = Type.Object({ success: Type.Boolean(), username: Type.String(), device_id: Type.String(), deleted: Type.Boolean() })

export const DeviceForgotten = Type.Object({ success: Type.Boolean(), device_id: Type.String(), forgotten: Type.Boolean() })

export const KeyReset = Type.Object({ success: Type.Boolean(), device_id: Type.String(), key_reset: Type.Boolean() })

export const AuditQuery = Type.Object({
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  release_id: Type.Optional(Id('Release id')),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  before: Type.Optional(Type.Integer({ minimum: 1, description: 'Cursor: the next_before of the previous page' })),
})

export const AuditRecord = Type.Object({
  id: Type.Integer(),
  at: Type.Number({ description: 'Seconds since epoch, fractional' }),
  actor: Type.String(),
  action: Type.String(),
  release_id: Type.Union([Type.String(), Type.Null()]),
  device_id: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.String(),
  detail: Type.Record(Type.String(), Type.Unknown()),
})

export const AuditList = Type.Object({
  success: Type.Boolean(),
  records: Type.Array(AuditRecord),
  next_before: Type.Optional(Type.Integer()),
})
