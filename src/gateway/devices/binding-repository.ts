import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely'
import type { Database } from '../../storage/database.js'
import { type Db, type Tx } from '../../storage/storage.js'
import { nowSeconds } from '../../lib/time.js'
import { pageOf } from '../../storage/paging.js'

export type BindingRow = Selectable<Database['user_device_bindings']>

export interface BindingQuery {
  limit: number
  /** Cursor: only bindings with a larger id. */
  after?: number
  username?: string
  device_id?: string
}

/**
 * A condition on a query from a table holding a device id (`devices`, `device_labels`): the device
 * is bound to `username`. How a user's reads see only their own machines.
 */
export function boundTo(username: string, deviceIdColumn: 'devices.device_id' | 'device_labels.device_id'): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from user_device_bindings b where b.device_id = ${sql.ref(deviceIdColumn)} and b.username = ${username})`
}

/** Which user may see and drive which device (created by a successful device login). */
export class BindingRepository {
  constructor(private readonly db: Db) {}

  /** True when the binding is new (false: it existed already). */
  async bind(user: { id: string; username: string }, deviceId: string): Promise<boolean> {
    const inserted = await this.db
      .insertInto('user_device_bindings')
      .values({ username: user.username, user_id: user.id, device_id: deviceId, created_at: nowSeconds() })
      .onConflict((oc) => oc.columns(['username', 'device_id']).doNothing())
      .executeTakeFirst()
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0
  }

  async isBound(username: string, deviceId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('user_device_bindings')
      .select('id')
      .where('username', '=', username)
      .where('device_id', '=', deviceId)
      .executeTakeFirst()
    return row !== undefined
  }

  async page(q: BindingQuery): Promise<{ rows: BindingRow[]; more: boolean }> {
    let query = this.db.selectFrom('user_device_bindings').selectAll().orderBy('id').limit(q.limit + 1)
    if (q.after !== undefined) query = query.where('id', '>', q.after)
    if (q.username !== undefined) query = query.where('username', '=', q.username)
    if (q.device_id !== undefined) query = query.where('device_id', '=', q.device_id)
    const rows = await query.execute()
    return pageOf(rows, q.limit)
  }

  /** Every device bound to `username` (read page by page). */
  async boundDeviceIds(username: string): Promise<string[]> {
    const ids: string[] = []
    let after: number | undefined
    for (;;) {
      const page = await this.page({ limit: 1000, username, after })
      ids.push(...page.rows.map((r) => r.device_id))
      if (!page.more) return ids
      after = page.rows[page.rows.length - 1]!.id
    }
  }

  /** True when the binding existed. `alongside` runs in the same transaction (the audit record): both are stored, or neither. */
  async unbind(username: string, deviceId: string, alongside: (tx: Tx, deleted: boolean) => Promise<void> = async () => {}): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const result = await tx.deleteFrom('user_device_bindings').where('username', '=', username).where('device_id', '=', deviceId).executeTakeFirst()
      const deleted = Number(result.numDeletedRows) === 1
      await alongside(tx, deleted)
      return deleted
    })
  }
}
