import type { Selectable } from 'kysely'
import type { Database } from '../../../storage/database.js'
import type { SelectableMachine } from './evaluate-selector.js'
import { reportedFirmware } from './reported-firmware.js'

export type StoredMachineRow = Pick<Selectable<Database['devices']>, 'version' | 'last_status' | 'link_instance' | 'last_heartbeat'>

/**
 * Online as the database knows it, and as `selectorCondition` tests it: linked, with a heartbeat
 * stored at or after `aliveSince` (now − DEVICE_ALIVE_SECONDS). The stored heartbeat lags the
 * live one by the status write interval; the live `alive` of a record can differ near the edge.
 */
export const onlineInStore = (row: Pick<StoredMachineRow, 'link_instance' | 'last_heartbeat'>, aliveSince: number): boolean =>
  row.link_instance !== null && row.last_heartbeat !== null && row.last_heartbeat >= aliveSince

/** What a selector sees of a stored machine: the in-memory twin of `selectorCondition`. */
export function storedMachine(row: StoredMachineRow, labels: Readonly<Record<string, string>>, aliveSince: number): SelectableMachine {
  return { labels, version: row.version, firmware: reportedFirmware(row.last_status), online: onlineInStore(row, aliveSince) }
}
