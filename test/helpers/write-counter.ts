import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import type { Db } from '../../src/storage/storage.js'

/** The table an INSERT, UPDATE or DELETE writes, or undefined for any other statement. */
function writtenTable(node: RootOperationNode): string | undefined {
  const name = (table: OperationNode | undefined): string | undefined => {
    if (!table) return undefined
    if (table.kind === 'TableNode') return (table as unknown as { table: { identifier: { name: string } } }).table.identifier.name
    if (table.kind === 'AliasNode') return name((table as unknown as { node: OperationNode }).node)
    return undefined
  }
  if (node.kind === 'InsertQueryNode') return name(node.into)
  if (node.kind === 'UpdateQueryNode') return name(node.table)
  if (node.kind === 'DeleteQueryNode') return name(node.from.froms[0])
  return undefined
}

/** Counts the writes (INSERT, UPDATE, DELETE) a database handle runs, per table. */
export class WriteCounter implements KyselyPlugin {
  readonly byTable = new Map<string, number>()

  wrap = (db: Db): Db => db.withPlugin(this)

  /** Writes to these tables since the counter was made (or last reset). */
  count(...tables: string[]): number {
    return tables.reduce((sum, table) => sum + (this.byTable.get(table) ?? 0), 0)
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(node)
    if (table) this.byTable.set(table, (this.byTable.get(table) ?? 0) + 1)
    return node
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result
  }
}
