import type { ColumnDefinitionBuilder, Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'
import type { Dialect } from '../storage.js'

/** What a migration may know of the engine: capability-like column types, never `if pg` in queries. */
export interface MigrationContext {
  dialect: Dialect
  /** Auto-increment integer primary key column type. */
  autoIdType: 'integer' | 'bigserial'
  /** Binary column type. */
  blobType: 'blob' | 'bytea'
  /**
   * Primary-key builder for an `autoIdType` column. Ids are never reused (SQLite AUTOINCREMENT)
   * unless `mayReuse`: cursors and command ids rely on that; bulk rows (telemetry points) skip
   * its cost.
   */
  autoId(options?: { mayReuse?: boolean }): (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder
}

export type MigrationFactory = (ctx: MigrationContext) => Migration

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDb = Kysely<any>
