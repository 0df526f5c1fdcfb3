import type { Db } from './storage.js'

/**
 * Returns the stored value of `key`, storing `make()` first if there is none. Safe when
 * several instances start at once: the first insert wins and everyone reads it back.
 */
export async function getOrCreateSetting(db: Db, key: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const existing = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst()
  if (existing) return { value: existing.value, created: false }
  const inserted = await db
    .insertInto('settings')
    .values({ key, value: make() })
    .onConflict((oc) => oc.column('key').doNothing())
    .returning('value')
    .executeTakeFirst()
  if (inserted) return { value: inserted.value, created: true }
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow()
  return { value: row.value, created: false }
}
