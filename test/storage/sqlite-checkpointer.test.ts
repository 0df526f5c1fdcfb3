import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RESTART_WAL_PAGES } from '../../src/storage/sqlite-checkpointer.js'
import { openStorage } from '../../src/storage/storage.js'

describe('SQLite checkpoints off the event loop', () => {
  let dir: string
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  const openFileStorage = async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-ckpt-'))
    const file = path.join(dir, 'fleetgate.db')
    const storage = await openStorage({ kind: 'sqlite', path: file })
    await storage.migrate()
    return { file, storage }
  }

  /** The rows the database file holds by itself, without its WAL (a copy of it alone). */
  const rowsInFileAlone = (file: string): number => {
    const copy = path.join(dir, `copy-${Math.random()}.db`)
    copyFileSync(file, copy)
    const db = new SqliteDatabase(copy, { readonly: true })
    try {
      return Number((db.prepare('select count(*) as n from platform_logs').get() as { n: number }).n)
    } finally {
      db.close()
    }
  }

  it('copies committed rows into the database file before SQLite\'s own checkpoint would, and leaves no WAL after close', async () => {
    const { file, storage } = await openFileStorage()
    // About 300 WAL pages: SQLite's own automatic checkpoint (1,000 pages) would not run yet.
    const message = 'x'.repeat(1000)
    for (let i = 0; i < 4; i++) {
      const rows = Array.from({ length: 250 }, (_, j) => ({ source: 'device', device_id: 'd', level: 'info', tag: null, message, ts: i * 1000 + j }))
      await storage.db.insertInto('platform_logs').values(rows).execute()
    }
    const walPages = statSync(`${file}-wal`).size / 4096
    expect(walPages).toBeGreaterThan(200)
    expect(walPages).toBeLessThan(1000)
    await vi.waitFor(() => expect(rowsInFileAlone(file)).toBe(1000), { timeout: 10_000, interval: 100 })
    await storage.close()
    expect(existsSync(`${file}-wal`)).toBe(false)
    // Reopened, everything is there.
    const again = new SqliteDatabase(file, { readonly: true })
    expect((again.prepare('select count(*) as n from platform_logs').get() as { n: number }).n).toBe(1000)
    again.close()
  })

  it('starts the WAL again from its beginning once it is long, while writes go on', async () => {
    const { file, storage } = await openFileStorage()
    const message = 'y'.repeat(1000)
    let written = 0
    // Writes a millisecond apart, as a busy server's (a 1 KB row is about a quarter of a page).
    const write = async () => {
      await storage.db
        .insertInto('platform_logs')
        .values(Array.from({ length: 500 }, (_, j) => ({ source: 'device', device_id: 'd', level: 'info', tag: null, message, ts: written + j })))
        .execute()
      written += 500
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    // The WAL header's checkpoint sequence number: SQLite adds one each time it starts the WAL again.
    const walRestarts = () => {
      const fd = openSync(`${file}-wal`, 'r')
      try {
        const header = Buffer.alloc(16)
        readSync(fd, header, 0, 16, 0)
        return header.readUInt32BE(12)
      } finally {
        closeSync(fd)
      }
    }
    while (statSync(`${file}-wal`).size < RESTART_WAL_PAGES * 4096 * 1.2) await write()
    const restartsBefore = walRestarts()
    // Past the threshold, with writes going on, the WAL starts again: without that it only grows.
    const until = performance.now() + 10_000
    while (walRestarts() === restartsBefore && performance.now() < until) await write()
    expect(walRestarts()).toBeGreaterThan(restartsBefore)
    await storage.close()
  })

  it('lets a transaction that reads and then writes wait for the write lock another connection holds, not fail', async () => {
    const { file, storage } = await openFileStorage()
    // Another thread holds the write lock for 200 ms, as the checkpointer's restart does briefly.
    const holder = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads')
       const db = new (require(workerData.driver))(workerData.file)
       db.exec('begin immediate')
       parentPort.postMessage('locked')
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200)
       db.exec('commit')
       db.close()`,
      { eval: true, workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
    )
    await once(holder, 'message')
    await storage.db.transaction().execute(async (tx) => {
      await tx.selectFrom('platform_logs').select('id').execute()
      await tx.insertInto('platform_logs').values({ source: 'device', device_id: 'd', level: 'info', tag: null, message: 'after the lock', ts: 1 }).execute()
    })
    await once(holder, 'exit')
    const rows = await storage.db.selectFrom('platform_logs').select('message').execute()
    expect(rows).toEqual([{ message: 'after the lock' }])
    await storage.close()
  })
})
