import { Type, type Static } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { BeforeCursor, ListLimit } from '../platform-schemas.js'
import { CommandStatusSchema } from './command-record.js'

/** One acknowledgement from the device. */
export const AckEntry = Type.Object(
  {
    id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    success: Type.Boolean(),
    result: Type.Optional(Type.Unknown({ description: 'Any JSON value' })),
    error: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
)
export type Ack = Static<typeof AckEntry>

export const CommandListQuery = Type.Object({
  device_id: Type.Optional(Id('Only commands of this device')),
  status: Type.Optional(CommandStatusSchema),
  limit: Type.Optional(ListLimit),
  before: Type.Optional(BeforeCursor),
})
/** The query with its default applied. */
export type CommandQuery = Static<typeof CommandListQuery> & { limit: number }
