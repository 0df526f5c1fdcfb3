import type { Static } from '@sinclair/typebox'
import { CompiledQuery } from 'kysely'
import { pageWithCursor } from '../../storage/paging.js'
import type { Db, Tx } from '../../storage/storage.js'
import { inTransaction } from '../../storage/transaction.js'
import type { HeartbeatBody } from '../device-api/device-api-schemas.js'
import { adjustTallies, left } from '../commands/command-tallies.js'
import { clearLogs } from '../logs/log-store.js'
import { deleteDeviceTelemetry } from '../telemetry/telemetry-store.js'
import type { DeviceRow } from './device-record.js'
import { tallyDevices, totalDevices } from './device-tallies.js'

export interface NewDevice {
  device_id: string
  model: string | null
  firmware_version?: string | null
  ip?: string | null
  token_hash: string | null
}

/** What a heartbeat reports besides its id. */
export type HeartbeatFields = Omit<Static<typeof HeartbeatBody>, 'device_id'>

/**
 * The device lookup's SQL by database handle, built by Kysely once: the lookup runs on every
 * device request (auth, heartbeat), where building the query each time cost more than running it.
 */
const findDeviceSql = new WeakMap<Db | Tx, string>()

export async function findDevice(db: Db | Tx, deviceId: string): Promise<DeviceRow | undefined> {
  let text = findDeviceSql.get(db)
  if (text === undefined) {
    text = db.selectFrom('platform_devices').selectAll().where('device_id', '=', deviceId).compile().sql
    findDeviceSql.set(db, text)
  }
  const { rows } = await db.executeQuery<DeviceRow>(CompiledQuery.raw(text, [deviceId]))
  return rows[0]
}

/** Creates the device and counts it, in one transaction; false when the id exists already (whoever raced us won). */
export async function insertDevice(db: Db | Tx, device: NewDevice, now: number, lastOnlineAt: number | null = null): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    const result = await tx
      .insertInto('platform_devices')
      .values({
        device_id: device.device_id,
        model: device.model,
        firmware_version: device.firmware_version ?? null,
        ip: device.ip ?? null,
        token_hash: device.token_hash,
        expression: null,
        uptime_s: null,
        rssi: null,
        created_at: now,
        last_online_at: lastOnlineAt,
      })
      .onConflict((oc) => oc.column('device_id').doNothing())
      .executeTakeFirst()
    const created = Number(result.numInsertedOrUpdatedRows ?? 0) > 0
    if (created) await tallyDevices(tx, 1)
    return created
  })
}

/** Marks the device online now and stores what the heartbeat reported (absent fields keep their value). */
export async function recordHeartbeat(db: Db, deviceId: string, fields: HeartbeatFields, now: number): Promise<void> {
  await db
    .updateTable('platform_devices')
    .set({
      last_online_at: now,
      ...(fields.model !== undefined ? { model: fields.model } : {}),
      ...(fields.firmware_version !== undefined ? { firmware_version: fields.firmware_version } : {}),
      ...(fields.ip !== undefined ? { ip: fields.ip } : {}),
      ...(fields.uptime_s !== undefined ? { uptime_s: fields.uptime_s } : {}),
      ...(fields.rssi !== undefined ? { rssi: fields.rssi } : {}),
    })
    .where('device_id', '=', deviceId)
    .execute()
}

export async function setExpression(db: Db | Tx, deviceId: string, expression: string): Promise<void> {
  await db.updateTable('platform_devices').set({ expression }).where('device_id', '=', deviceId).execute()
}

export async function setTokenHash(db: Db | Tx, deviceId: string, tokenHash: string): Promise<void> {
  await db.updateTable('platform_devices').set({ token_hash: tokenHash }).where('device_id', '=', deviceId).execute()
}

/** Sorted by device id (byte order); `after` is the last id of the previous page. */
export async function listDevices(db: Db, limit: number, after?: string): Promise<{ rows: DeviceRow[]; next_after?: string }> {
  let query = db.selectFrom('platform_devices').selectAll().orderBy('device_id').limit(limit + 1)
  if (after !== undefined) query = query.where('device_id', '>', after)
  const rows = await query.execute()
  const { rows: page, next } = pageWithCursor(rows, limit, (row) => row.device_id)
  return next === undefined ? { rows: page } : { rows: page, next_after: next }
}

/**
 * Every device (the tallies), and those heard from since `onlineSince`: a range of the narrow
 * last-online index, as long as the online devices (the window is a minute or so, shorter than
 * any tally bucket worth keeping, and a heartbeat writes no tally).
 */
export async function countDevices(db: Db, onlineSince: number): Promise<{ total: number; online: number }> {
  const [total, online] = await Promise.all([
    totalDevices(db),
    db.selectFrom('platform_devices').select((eb) => eb.fn.countAll<number>().as('n')).where('last_online_at', '>=', onlineSince).executeTakeFirstOrThrow(),
  ])
  return { total, online: Number(online.n) }
}

/**
 * Removes the device and everything that belongs to it; call inside one transaction. The
 * device's row goes first: a telemetry write holding it (FOR KEY SHARE, see
 * `TelemetryStore.admit`) commits before this goes on, so its points are deleted here too.
 */
export async function deleteDeviceAndData(tx: Tx, deviceId: string): Promise<boolean> {
  const result = await tx.deleteFrom('platform_devices').where('device_id', '=', deviceId).executeTakeFirst()
  const deleted = Number(result.numDeletedRows) > 0
  await deleteDeviceTelemetry(tx, deviceId)
  const commands = await tx.deleteFrom('platform_commands').where('device_id', '=', deviceId).returning(['id', 'status']).execute()
  await adjustTallies(tx, commands.map(left))
  await tx.deleteFrom('platform_configs').where('device_id', '=', deviceId).execute()
  // The device's own logs; operation logs about it stay as the audit trail.
  await clearLogs(tx, { device_id: deviceId, source: 'device' })
  await tx.deleteFrom('platform_bind_codes').where('device_id', '=', deviceId).execute()
  await tx.deleteFrom('platform_bindings').where('device_id', '=', deviceId).execute()
  if (deleted) await tallyDevices(tx, -1)
  return deleted
}
