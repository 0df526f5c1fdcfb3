import {
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely'

/**
 * Kysely's PostgreSQL introspector (which its Migrator uses to find its own tables) reads
 * every schema of the database and fails with "schema … does not exist" when another schema
 * is dropped while it runs — tests and several deployments sharing one database do that.
 * This one only looks at the connection's current schema, the one our tables live in.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  getSchemas(): Promise<SchemaMetadata[]> {
    return new PostgresIntrospector(this.db).getSchemas()
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; is_view: boolean }>`
      select c.relname as name, n.nspname as schema, c.relkind = 'v' as is_view
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')`.execute(this.db)
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.is_view, isForeign: false, columns: [] }))
  }
}

export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}
