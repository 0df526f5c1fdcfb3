import { Type, type Static } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { Database } from '../../storage/database.js'
import { JsonObject, Millis, Nullable, StringEnum } from '../platform-schemas.js'

export const COMMAND_STATUSES = ['pending', 'delivered', 'done', 'failed', 'expired'] as const
export type CommandStatus = (typeof COMMAND_STATUSES)[number]
/** Still in the queue: may be delivered (again). */
export const QUEUED_STATUSES: CommandStatus[] = ['pending', 'delivered']

export const CommandStatusSchema = StringEnum(COMMAND_STATUSES)

/** The status a row holds, when it is one of `COMMAND_STATUSES` (the column is plain text). */
export const commandStatus = (value: string): CommandStatus | undefined => COMMAND_STATUSES.find((s) => s === value)

export type CommandRow = Selectable<Database['platform_commands']>

export const CommandRecord = Type.Object({
  id: Type.Integer(),
  device_id: Type.String(),
  action: Type.String(),
  params: JsonObject,
  status: CommandStatusSchema,
  attempts: Type.Integer({ description: 'Deliveries so far' }),
  created_at: Millis('Queued'),
  delivered_at: Nullable(Millis('Last delivery')),
  acked_at: Nullable(Millis('First acknowledgement')),
  result: Type.Unknown({ description: 'What the device reported with its ack, or null' }),
  error: Nullable(Type.String()),
})
export type CommandRecord = Static<typeof CommandRecord>

export function toCommandRecord(row: CommandRow): CommandRecord {
  return {
    id: row.id,
    device_id: row.device_id,
    action: row.action,
    params: JSON.parse(row.params) as Record<string, unknown>,
    status: row.status as CommandStatus,
    attempts: row.attempts,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    acked_at: row.acked_at,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error,
  }
}
