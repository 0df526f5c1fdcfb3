import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../events/event-envelope.js'
import { Millis } from '../platform-schemas.js'
import { CommandStatusSchema, commandStatus, type CommandRow } from './command-record.js'

/** `data` of `event: command`: a command changed state (contract §7), expiry included. */
export const CommandEventData = Type.Object({
  device_id: Type.String(),
  id: Type.Integer(),
  action: Type.String(),
  status: CommandStatusSchema,
  attempts: Type.Integer({ description: 'Deliveries so far' }),
  at: Millis('Event time'),
})
export const CommandEvent = eventSchema('command', CommandEventData)
export type CommandEvent = Static<typeof CommandEvent>

/** The event of a row whose state just changed; none for a status outside `COMMAND_STATUSES` (never written). */
export function commandEvent(row: Pick<CommandRow, 'device_id' | 'id' | 'action' | 'status' | 'attempts'>, at = Date.now()): CommandEvent | undefined {
  const status = commandStatus(row.status)
  if (status === undefined) return undefined
  return { kind: 'command', data: { device_id: row.device_id, id: row.id, action: row.action, status, attempts: row.attempts, at } }
}
