import type { Db, Tx } from '../../storage/storage.js'
import { insertLogs } from './log-store.js'

export interface Operation {
  /** Who did it: `console` (X-Console-Token) or the admin's username. */
  actor: string
  /** Short name of the write, kept as the entry's tag: `device.add`, `command.create`, … */
  action: string
  device_id?: string | null
  message: string
}

/** Records an admin write as an `operation` log entry (contract §8); pass the write's transaction. */
export async function recordOperation(db: Db | Tx, op: Operation, now = Date.now()): Promise<void> {
  await insertLogs(db, [
    { source: 'operation', device_id: op.device_id ?? null, level: 'info', tag: op.action, message: `${op.actor}: ${op.message}`, ts: now },
  ])
}
