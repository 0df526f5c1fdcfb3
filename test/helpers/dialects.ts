import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { DatabaseTarget } from '../../src/config/config.js'
import { dropSchema, openStorage, type Dialect, type Storage } from '../../src/storage/storage.js'

export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

/**
 * The engines every storage-touching suite runs on: both by default. `TEST_DIALECTS`
 * narrows it (e.g. `sqlite`) outside CI. In CI both are required: a narrowed list or an
 * unreachable server fails the run instead of quietly turning off every PostgreSQL, cluster
 * and fault suite.
 */
async function resolveDialects(): Promise<Dialect[]> {
  const wanted = (process.env.TEST_DIALECTS ?? 'sqlite,postgres').split(',').map((s) => s.trim()) as Dialect[]
  if (process.env.CI === 'true' && !(wanted.includes('sqlite') && wanted.includes('postgres'))) {
    throw new Error(`CI runs every suite on both engines: TEST_DIALECTS=${process.env.TEST_DIALECTS} would turn some off`)
  }
  if (!wanted.includes('postgres')) return wanted
  if (await postgresReachable()) return wanted
  if (process.env.CI) throw new Error(`PostgreSQL is required in CI but ${TEST_POSTGRES_URL} is unreachable`)
  console.warn(`\n!!! PostgreSQL at ${TEST_POSTGRES_URL} is unreachable: running the SQLite leg only !!!\n`)
  return wanted.filter((d) => d !== 'postgres')
}

export const DIALECTS: Dialect[] = await resolveDialects()

export interface TestDatabase {
  target: DatabaseTarget
  /** Drops what the test created (the PostgreSQL schema). */
  cleanup(): Promise<void>
}

/** A fresh, empty database: SQLite in memory or its own PostgreSQL schema. */
export function testDatabase(dialect: Dialect, file?: string): TestDatabase {
  if (dialect === 'sqlite') {
    return { target: file ? { kind: 'sqlite', path: file } : { kind: 'sqlite-memory' }, cleanup: async () => {} }
  }
  const schema = `t_${process.pid}_${randomBytes(6).toString('hex')}`
  return {
    target: { kind: 'postgres', url: TEST_POSTGRES_URL, schema },
    cleanup: () => dropSchema(TEST_POSTGRES_URL, schema),
  }
}

export async function openTestStorage(dialect: Dialect): Promise<Storage & { cleanup(): Promise<void> }> {
  const database = testDatabase(dialect)
  const storage = await openStorage(database.target)
  await storage.migrate()
  return Object.assign(storage, {
    async cleanup() {
      await storage.close().catch(() => {})
      await database.cleanup()
    },
  })
}

/** Two handles on one fresh database, as two instances have (on SQLite one: a file has one writer process). */
export async function openTwoInstances(dialect: Dialect): Promise<{ a: Storage; b: Storage; cleanup(): Promise<void> }> {
  const database = testDatabase(dialect)
  const a = await openStorage(database.target)
  await a.migrate()
  const b = dialect === 'postgres' ? await openStorage(database.target) : a
  return {
    a,
    b,
    async cleanup() {
      if (b !== a) await b.close()
      await a.close()
      await database.cleanup()
    },
  }
}
