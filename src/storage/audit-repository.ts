import type { Selectable } from 'kysely'
import type { Database } from './database.js'
import type { Db } from './storage.js'
import { nowSeconds } from '../lib/time.js'
import { newestFirstPage } from './paging.js'

export interface AuditEntry {
  actor: string
  action: string
  outcome: string
  release_id?: string | null
  device_id?: string | null
  detail?: Record<string, unknown>
}

export type AuditRecord = Omit<Selectable<Database['audit_log']>, 'detail'> & { detail: Record<string, unknown> }

/** Appends one audit record (firmware uploads and activations, admin actions on devices). */
export async function writeAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      at: nowSeconds(),
      actor: entry.actor,
      action: entry.action,
      outcome: entry.outcome,
      release_id: entry.release_id ?? null,
      device_id: entry.device_id ?? null,
      detail: JSON.stringify(entry.detail ?? {}),
    })
    .execute()
}

export interface AuditQuery {
  action?: string
  release_id?: string
  actor?: string
  limit: number
  /** Cursor: only records with an id below this one (newest first paging). */
  before?: number
}

/** Newest first. Returns `limit` records and the cursor of the next page, if any. */
export async function listAudit(db: Db, q: AuditQuery): Promise<{ records: AuditRecord[]; next_before?: number }> {
  let query = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(q.limit + 1)
  if (q.action) query = query.where('action', '=', q.action)
  if (q.release_id) query = query.where('release_id', '=', q.release_id)
  if (q.actor) query = query.where('actor', '=', q.actor)
  if (q.before !== undefined) query = query.where('id', '<', q.before)
  const rows = await query.execute()
  const { rows: page, next_before } = newestFirstPage(rows, q.limit)
  const records = page.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }))
  return next_before === undefined ? { records } : { records, next_before }
}
