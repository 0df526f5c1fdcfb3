import { randomInt } from 'node:crypto'
import type { Db, Tx } from '../../storage/storage.js'
import type { BindStatus, Binding } from './bind-schemas.js'

export const BIND_CODE_TTL_MS = 5 * 60_000


const sixDigits = () => String(randomInt(0, 1_000_000)).padStart(6, '0')

/** A fresh 6-digit code valid 5 minutes; it replaces the device's previous code. */
export async function issueBindCode(db: Db, deviceId: string, now: number): Promise<{ code: string; expires_at: number }> {
  const expires_at = now + BIND_CODE_TTL_MS
  // Avoid a code another device holds right now, so a code names one device.
  let code = sixDigits()
  for (let i = 0; i < 10 && (await liveCodeHolder(db, code, now)) !== undefined; i++) code = sixDigits()
  await db
    .insertInto('platform_bind_codes')
    .values({ device_id: deviceId, code, expires_at })
    .onConflict((oc) => oc.column('device_id').doUpdateSet({ code, expires_at }))
    .execute()
  return { code, expires_at }
}

async function liveCodeHolder(db: Db, code: string, now: number): Promise<string | undefined> {
  const row = await db.selectFrom('platform_bind_codes').select('device_id').where('code', '=', code).where('expires_at', '>', now).executeTakeFirst()
  return row?.device_id
}

/**
 * Consumes a live code and binds its device to the user (replacing an earlier binding).
 * Undefined when the code is wrong, expired or was just used by someone else.
 */
export async function redeemBindCode(
  db: Db,
  code: string,
  userId: string,
  now: number,
  /** Runs in the same transaction once bound (the operation log entry). */
  onBound: (tx: Tx, binding: Binding) => Promise<void> = async () => {},
): Promise<Binding | undefined> {
  return db.transaction().execute(async (tx) => {
    const holders = await tx.selectFrom('platform_bind_codes').select('device_id').where('code', '=', code).where('expires_at', '>', now).limit(2).execute()
    // Two devices holding one code is a race of issueBindCode; refuse rather than guess.
    if (holders.length !== 1) return undefined
    const deviceId = holders[0]!.device_id
    const consumed = await tx
      .deleteFrom('platform_bind_codes')
      .where('device_id', '=', deviceId)
      .where('code', '=', code)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    if (Number(consumed.numDeletedRows) !== 1) return undefined
    const binding = { device_id: deviceId, user_id: userId, bound_at: now }
    await tx
      .insertInto('platform_bindings')
      .values(binding)
      .onConflict((oc) => oc.column('device_id').doUpdateSet({ user_id: userId, bound_at: now }))
      .execute()
    await onBound(tx, binding)
    return binding
  })
}

export async function bindStatus(db: Db, deviceId: string): Promise<BindStatus> {
  const row = await db.selectFrom('platform_bindings').select(['user_id', 'bound_at']).where('device_id', '=', deviceId).executeTakeFirst()
  return row ? { bound: true, user_id: row.user_id, bound_at: row.bound_at } : { bound: false }
}

export async function deleteExpiredBindCodes(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('platform_bind_codes').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}
