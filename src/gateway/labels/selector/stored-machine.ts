import type { Selectable } from 'kysely'
import type { Database } from '../../../storage/database.js'
import type { SelectableMachine } from './evaluate-selector.js'
import { reportedFirmware } from './reported-firmware.js'

export type StoredMachineRow = Pick<Selectable<Database['devices']>, 'version' | 'last_status' | 'link_instance' | 'last_heartbeat' | 'connect_time'>

/**
 * Online as the database knows it, and as `selectorCondition` tests it: linked, with a heartbeat
 * or a registration stored at or after `aliveSince` (now − DEVICE_ALIVE_SECONDS; a link is alive
 * from its registration until it falls silent). The stored heartbeat lags the live one by the
 * status write interval; the live `alive` of a record can differ near the edge.
 */
export const onlineInStore = (row: Pick<StoredMachineRow, 'link_instance' | 'last_heartbeat' | 'connect_time'>, aliveSince: number): boolean =>
  row.link_instance !== null && [row.last_heartbeat, row.connect_time].some((time) => time !== null && time >= aliveSince)

/** What a selector sees of a stored machine: the in-memory twin of `selectorCondition`. */
export function storedMachine(row: StoredMachineRow, labels: Readonly<Record<string, string>>, aliveSince: number): SelectableMachine {
  return { labels, version: row.version, firmware: reportedFirmware(row.last_status), online: onlineInStore(row, aliveSince) }
}
