import { randomBytes } from 'node:crypto'
import { runAdminStatement } from '../storage/storage.js'

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
  await runAdminStatement(serverUrl, name, (db) => `create database ${db}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), name, drop: () => runAdminStatement(serverUrl, name, (db) => `drop database if exists ${db} with (force)`) }
}
