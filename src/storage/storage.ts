import { mkdirSync } from 'node:fs'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver, type SqliteDialectConfig, type SqliteDatabase as SqliteDialectDatabase, type Transaction } from 'kysely'
import { Migrator, type MigrationProvider } from 'kysely/migration'
import pg from 'pg'
import type { DatabaseTarget } from '../config/config.js'
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js'
import { databaseClock, type DatabaseClock } from './database-clock.js'
import type { Database } from './database.js'
import { migrationsFor } from './migrations/index.js'
import type { MigrationContext } from './migrations/migration-context.js'
import { startSqliteCheckpointer, type SqliteCheckpointer } from './sqlite-checkpointer.js'
import { reportingUnreachableAsUnavailable } from './unreachable-database.js'

export type Dialect = 'sqlite' | 'postgres'
export type Db = Kysely<Database>
export type Tx = Transaction<Database>

/**
 * The one storage seam. Only this file (and its SQLite checkpointer) knows the drivers;
 * everything else writes Kysely queries that run on both engines.
 */
export interface Storage {
  readonly db: Db
  readonly dialect: Dialect
  /**
   * Write transactions that can usefully run at once: 1 on SQLite (one writer, one connection),
   * several on PostgreSQL (its pool; row locks, not a database lock). Group commits use it.
   */
  readonly concurrentWriters: number
  /**
   * A write transaction runs to its end without yielding to the event loop (SQLite through
   * better-sqlite3): a group commit must wait a turn of the event loop to gather anything.
   */
  readonly synchronousWrites: boolean
  /** `SELECT … FOR UPDATE SKIP LOCKED` is available (PostgreSQL; SQLite runs one writer at a time). */
  readonly skipLocked: boolean
  /**
   * The system column naming a row where the table has no key of its own (telemetry points):
   * PostgreSQL's `ctid`, SQLite's `rowid`. Valid within one statement.
   */
  readonly rowId: RowId
  /** The database's clock: what instances compare times they write into shared rows by. */
  readonly clock: DatabaseClock
  /**
   * Runs `fn` in a transaction whose statements the database cancels once `ms` have passed, so
   * a write its caller gave up on never commits later (PostgreSQL's statement_timeout). SQLite
   * runs a statement to its end at once (one process, synchronous): there `fn` just runs.
   */
  bounded<T>(ms: number, fn: (trx: Db) => Promise<T>): Promise<T>
  /**
   * Runs `fn` unless another holder (this or another instance) runs one under the same name;
   * resolves undefined when skipped. PostgreSQL: a session advisory lock, released when `fn`
   * ends or the session dies. SQLite: one process owns the file, so `fn` just runs.
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T | undefined>
  /** Throws when the database cannot be reached (on PostgreSQL, `databaseUnavailable`). */
  ping(): Promise<void>
  migrate(): Promise<void>
  close(): Promise<void>
}

export type RowId = 'ctid' | 'rowid'

export class StorageError extends Error {}

function openSqlite(file: string | ':memory:'): { db: Kysely<Database>; checkpointer?: SqliteCheckpointer } {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const sqlite = new SqliteDatabase(file)
  // WAL + NORMAL: a committed transaction survives a process crash (SIGKILL); only an OS
  // crash or power loss may lose the last ones.
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const setAutocheckpoint = (pages: number) => {
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${pages}`) // a worker failing after close changes nothing
  }
  const checkpointer = file === ':memory:' ? undefined : startSqliteCheckpointer(file, setAutocheckpoint)
  return { db: new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }) }), checkpointer }
}

/**
 * Transactions begin IMMEDIATE: they take SQLite's write lock at BEGIN, waiting for it under the
 * busy time-out. A deferred transaction that has read and then writes while another connection
 * holds that lock (the checkpointer's restart) fails at once with SQLITE_BUSY: SQLite does not
 * wait there, as waiting could deadlock two such transactions.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings)
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings)
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

const STATEMENT_CACHE_SIZE = 256

/**
 * Kysely prepares every query anew; on hot paths (telemetry ingest) preparing costs more than
 * running. Statements are cached by SQL text. Reuse is safe: Kysely runs one query at a time
 * on its single SQLite connection.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectDatabase {
  const cache = new Map<string, SqliteDatabase.Statement>()
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = cache.get(text)
      if (stmt) {
        cache.delete(text)
      } else {
        stmt = sqlite.prepare(text)
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!)
      }
      cache.set(text, stmt)
      return stmt
    },
  }
}

const POOL_SIZE = 10
/** Group-commit writers on PostgreSQL: enough to overlap commits' round trips and fsyncs, leaving connections to reads. */
const PG_WRITERS = 4

function openPostgres(url: string, schema: string | undefined): Kysely<Database> {
  // int8 (COUNT, bigint ids, ms timestamps) as JS numbers: every value we store fits in 2^53.
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: 5000,
    types: types as pg.CustomTypesConfig,
    // JIT off: every statement here is index-driven, and a plan whose estimated cost passes
    // jit_above_cost (the fleet's production figures, 10,000 machines) spent about 70 of its
    // 130 ms compiling expressions (EXPLAIN ANALYZE, npm run bench -- production queries).
    options: ['-c jit=off', ...(schema ? [`-c search_path=${schema}`] : [])].join(' '),
  })
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it. Queries report their own errors.
  })
  // A client checked out of the pool has no listener of the pool's: when its connection ends
  // (the server stops, the network drops) between two statements of a transaction, pg emits
  // 'error' on it, which unheard would crash the process. The statements report the loss
  // themselves, and the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined))
  // A server that cannot be reached surfaces as 503 `service_unavailable`, never as a 500.
  return new Kysely<Database>({ dialect: reportingUnreachableAsUnavailable(new CurrentSchemaPostgresDialect({ pool })) })
}

export async function openStorage(target: DatabaseTarget): Promise<Storage> {
  const dialect: Dialect = target.kind === 'postgres' ? 'postgres' : 'sqlite'
  let db: Kysely<Database>
  let checkpointer: SqliteCheckpointer | undefined
  if (target.kind === 'postgres') {
    if (target.schema) await createSchema(target.url, target.schema)
    db = openPostgres(target.url, target.schema)
  } else {
    ;({ db, checkpointer } = openSqlite(target.kind === 'sqlite' ? target.path : ':memory:'))
  }
  const ctx: MigrationContext = {
    dialect,
    autoIdType: dialect === 'postgres' ? 'bigserial' : 'integer',
    blobType: dialect === 'postgres' ? 'bytea' : 'blob',
    autoId:
      ({ mayReuse = false } = {}) =>
      (column) =>
        dialect === 'sqlite' && !mayReuse ? column.primaryKey().autoIncrement() : column.primaryKey(),
  }
  const storage: Storage = {
    db,
    dialect,
    skipLocked: dialect === 'postgres',
    rowId: dialect === 'postgres' ? 'ctid' : 'rowid',
    clock: databaseClock(dialect),
    bounded: dialect === 'postgres' ? (ms, fn) => boundedOnPostgres(db, ms, fn) : (_ms, fn) => db.transaction().execute(fn),
    exclusive: dialect === 'postgres' ? (name, fn) => withAdvisoryLock(db, name, fn) : (_name, fn) => fn(),
    concurrentWriters: dialect === 'postgres' ? PG_WRITERS : 1,
    synchronousWrites: dialect === 'sqlite',
    async ping() {
      await sql`select 1`.execute(db)
    },
    async migrate() {
      const provider: MigrationProvider = { getMigrations: async () => migrationsFor(ctx) }
      // Kysely finds its bookkeeping tables by introspecting every schema: name ours explicitly.
      const schema = target.kind === 'postgres' ? target.schema : undefined
      const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) })
      const { error, results } = await migrator.migrateToLatest()
      if (error) {
        const failed = results?.find((r) => r.status === 'Error')?.migrationName
        throw new StorageError(`migration ${failed ?? '?'} failed: ${(error as Error).message ?? error}`)
      }
    },
    async close() {
      await checkpointer?.stop()
      await db.destroy()
    },
  }
  return storage
}

/**
 * BEGIN and the time-out go in one round trip (two statements of one simple-protocol query;
 * the number is ours, never a caller's text): a claim batch costs three round trips, not the
 * four that Kysely's transaction plus a `set_config` statement took. `set local` ends with the
 * transaction, so the pooled connection keeps no time-out.
 */
async function boundedOnPostgres<T>(db: Kysely<Database>, ms: number, fn: (trx: Db) => Promise<T>): Promise<T> {
  if (!Number.isFinite(ms)) throw new StorageError(`a bounded transaction needs a finite time-out, not ${ms}`)
  const timeoutMs = Math.max(1, Math.ceil(ms))
  return db.connection().execute(async (conn) => {
    await sql.raw(`begin; set local statement_timeout = ${timeoutMs}`).execute(conn)
    let result: T
    try {
      result = await fn(conn)
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => undefined)
      throw error
    }
    // COMMIT answers with a ROLLBACK tag when a failed statement that `fn` caught left the transaction aborted.
    const { rows } = await sql<{ command?: string }>`commit`.execute(conn)
    if (rows[0]?.command === 'ROLLBACK') throw new StorageError('the bounded transaction was rolled back: one of its statements failed')
    return result
  })
}

/** The lock lives on one pooled connection, held aside while `fn` runs on the others. */
async function withAdvisoryLock<T>(db: Kysely<Database>, name: string, fn: () => Promise<T>): Promise<T | undefined> {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtext(${name})) as locked`.execute(conn)
    if (!rows[0]?.locked) return undefined
    try {
      return await fn()
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${name}))`.execute(conn)
    }
  })
}

const PG_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Runs one administrative statement on its own short connection; `name` (a schema or database) is checked before it is spliced in. */
export async function runAdminStatement(url: string, name: string, statement: (name: string) => string): Promise<void> {
  if (!PG_NAME.test(name)) throw new StorageError(`invalid name ${name}`)
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    await client.query(statement(name))
  } finally {
    await client.end()
  }
}

const createSchema = (url: string, schema: string) => runAdminStatement(url, schema, (name) => `create schema if not exists ${name}`)

/** Drops a schema made for tests (PostgreSQL only). */
export const dropSchema = (url: string, schema: string) => runAdminStatement(url, schema, (name) => `drop schema if exists ${name} cascade`)

