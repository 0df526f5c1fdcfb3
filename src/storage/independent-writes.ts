import { CompiledQuery } from 'kysely'
import type { Db, Dialect } from './storage.js'

/** Parameters per combined statement, at most: PostgreSQL allows 65,535. */
const MAX_PARAMETERS = 30_000

/**
 * Runs writes none of which reads or writes a row another one writes, in the caller's
 * transaction. On PostgreSQL each write costs a round trip, so they go as few statements of
 * data-modifying WITH clauses (one snapshot for all, hence the rule). On SQLite, in process, one
 * after another.
 */
export async function runIndependentWrites(trx: Db, dialect: Dialect, writes: readonly CompiledQuery[]): Promise<void> {
  if (dialect === 'sqlite' || writes.length <= 1) {
    for (const write of writes) await trx.executeQuery(write)
    return
  }
  for (const statement of combined(writes)) await trx.executeQuery(statement)
}

/**
 * `with w0 as (…), w1 as (…) select 1`, each write's parameters $1… renumbered after those
 * before it (the texts, compiled by Kysely, hold no other `$`).
 */
function combined(writes: readonly CompiledQuery[]): CompiledQuery[] {
  const groups: CompiledQuery[][] = [[]]
  let count = 0
  for (const write of writes) {
    if (count > 0 && count + write.parameters.length > MAX_PARAMETERS) {
      groups.push([])
      count = 0
    }
    groups.at(-1)!.push(write)
    count += write.parameters.length
  }
  return groups.map((group) => {
    if (group.length === 1) return group[0]!
    const parameters: unknown[] = []
    const clauses = group.map((write, i) => {
      const offset = parameters.length
      parameters.push(...write.parameters)
      return `w${i} as (${write.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`
    })
    return CompiledQuery.raw(`with ${clauses.join(', ')} select 1`, parameters)
  })
}
