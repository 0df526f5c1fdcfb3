import { randomBytes } from 'node:crypto'
import pg from 'pg'

export interface ScratchDatabase {
  /** postgres:// URL of the new database. */
  url: string
  name: string
  /** Drops the database, closing whatever sessions remain on it. */
  drop(): Promise<void>
}

/**
 * A fresh PostgreSQL database on the server of `serverUrl`, for a local cluster, a benchmark or
 * a test run: every instance gets the same `url`.
 */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid database name ${name}`)
  await admin(serverUrl, `create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), name, drop: () => admin(serverUrl, `drop database if exists ${name} with (force)`) }
}

async function admin(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
