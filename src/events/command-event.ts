import type { CommandRow, CommandStatus } from '../platform/commands/command-record.js'
import type { FleetEvent } from './fleet-event.js'

export const commandEvent = (row: Pick<CommandRow, 'device_id' | 'id' | 'action' | 'status' | 'attempts'>, at = Date.now()): FleetEvent => ({
  kind: 'command',
  data: { device_id: row.device_id, id: row.id, action: row.action, status: row.status as CommandStatus, attempts: row.attempts, at },
})
