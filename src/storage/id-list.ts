import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { Dialect } from './storage.js'

/**
 * `column IN (ids)` with the whole list as one bound parameter, however long (100,000 ids would
 * pass both engines' limits on parameters): PostgreSQL `= any($1::text[])`, SQLite
 * `in (select value from json_each($1))`. `column` is a trusted, qualified column name.
 */
export function inIdList(dialect: Dialect, column: string, ids: readonly string[]): RawBuilder<SqlBool> {
  const ref = sql.ref(column)
  return dialect === 'postgres' ? sql<SqlBool>`${ref} = any(${[...ids]}::text[])` : sql<SqlBool>`${ref} in (select value from json_each(${JSON.stringify(ids)}))`
}
