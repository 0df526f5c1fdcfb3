import type { Db } from '../../storage/storage.js'

/** Settings row: heartbeats older than this were already announced offline. */
const OFFLINE_CURSOR = 'events.platform_offline_cutoff'

/**
 * A heartbeat arrived: true when the device was offline until now (no heartbeat within the
 * threshold). Decided by one conditional UPDATE, so concurrent heartbeats on several instances
 * report the transition once.
 */
export async function markOnline(db: Db, deviceId: string, onlineSince: number, now: number): Promise<boolean> {
  const updated = await db
    .updateTable('platform_devices')
    .set({ last_online_at: now })
    .where('device_id', '=', deviceId)
    .where((eb) => eb.or([eb('last_online_at', 'is', null), eb('last_online_at', '<', onlineSince)]))
    .executeTakeFirst()
  return Number(updated.numUpdatedRows) > 0
}

/**
 * Devices that went offline since the previous sweep: those whose last heartbeat falls between
 * the previous cut-off and this one. The cut-off is advanced by a compare-and-set UPDATE, so
 * when several instances sweep at once exactly one of them reports each window.
 */
export async function sweepPlatformOffline(db: Db, onlineSince: number): Promise<{ device_id: string; last_online_at: number | null }[]> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', OFFLINE_CURSOR).executeTakeFirst()
  if (!row) {
    // First sweep of this database: devices offline already are not news.
    await db.insertInto('settings').values({ key: OFFLINE_CURSOR, value: String(onlineSince) }).onConflict((oc) => oc.column('key').doNothing()).execute()
    return []
  }
  const previous = Number(row.value)
  if (!(onlineSince > previous)) return []
  const won = await db
    .updateTable('settings')
    .set({ value: String(onlineSince) })
    .where('key', '=', OFFLINE_CURSOR)
    .where('value', '=', row.value)
    .executeTakeFirst()
  if (Number(won.numUpdatedRows) !== 1) return []
  return db
    .selectFrom('platform_devices')
    .select(['device_id', 'last_online_at'])
    .where('last_online_at', '>=', previous)
    .where('last_online_at', '<', onlineSince)
    .execute()
}
