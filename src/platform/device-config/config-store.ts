import { AppError } from '../../errors.js'
import type { Db, Tx } from '../../storage/storage.js'
import { MAX_CONFIG_BYTES, type DeviceConfig } from './config-schemas.js'

export async function readConfig(db: Db | Tx, deviceId: string): Promise<DeviceConfig> {
  const row = await db.selectFrom('platform_configs').selectAll().where('device_id', '=', deviceId).executeTakeFirst()
  if (!row) return { config: {}, version: 0, updated_at: null }
  return { config: JSON.parse(row.config) as Record<string, unknown>, version: row.version, updated_at: row.updated_at }
}

/**
 * Replaces the configuration and bumps its version. With `expected`, the write succeeds only
 * if the stored version still equals it (optimistic concurrency), else 409.
 */
export async function writeConfig(
  db: Db | Tx,
  deviceId: string,
  config: Record<string, unknown>,
  expected: number | undefined,
  now: number,
): Promise<DeviceConfig> {
  const text = JSON.stringify(config)
  if (Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    throw new AppError('payload_too_large', `Configuration larger than ${MAX_CONFIG_BYTES} bytes`)
  }
  let version: number | undefined
  if (expected === undefined) {
    const row = await db
      .insertInto('platform_configs')
      .values({ device_id: deviceId, config: text, version: 1, updated_at: now })
      .onConflict((oc) =>
        oc.column('device_id').doUpdateSet((eb) => ({
          config: eb.ref('excluded.config'),
          updated_at: eb.ref('excluded.updated_at'),
          version: eb('platform_configs.version', '+', 1),
        })),
      )
      .returning('version')
      .executeTakeFirstOrThrow()
    version = row.version
  } else if (expected === 0) {
    const row = await db
      .insertInto('platform_configs')
      .values({ device_id: deviceId, config: text, version: 1, updated_at: now })
      .onConflict((oc) => oc.column('device_id').doNothing())
      .returning('version')
      .executeTakeFirst()
    version = row?.version
  } else {
    const row = await db
      .updateTable('platform_configs')
      .set((eb) => ({ config: text, updated_at: now, version: eb('version', '+', 1) }))
      .where('device_id', '=', deviceId)
      .where('version', '=', expected)
      .returning('version')
      .executeTakeFirst()
    version = row?.version
  }
  if (version === undefined) {
    const current = await readConfig(db, deviceId)
    throw new AppError('conflict', `Stale configuration version ${expected}; current is ${current.version}`, { version: current.version })
  }
  return { config, version, updated_at: now }
}
