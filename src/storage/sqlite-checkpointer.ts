import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** How often the worker copies the WAL into the database file… */
export const CHECKPOINT_INTERVAL_MS = 1000
/** …unless its last pass copied this many pages or more: then it goes again at once. */
const BUSY_PAGES = 1000
/**
 * WAL pages after which the worker also makes SQLite start the WAL again from its beginning.
 * Its copies run beside the writer, so the WAL is seldom wholly copied at the moment a write
 * begins, which is when SQLite reuses it; without this it would only grow.
 */
export const RESTART_WAL_PAGES = 16_000
/** A copy pass this short leaves little for the restart to copy and sync. */
const QUICK_PASS_MS = 3
/** How long the worker waits for a write under way before its restart (the next pass tries again). */
const RESTART_WAIT_MS = 200
/** SQLite's own automatic checkpoint (pages), back on the main connection if the worker fails. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000

/**
 * The worker's code, given as source: a file beside this one would be `.ts` under the tests and
 * `.js` when built. It needs nothing but the driver, whose resolved path it is given. A PASSIVE
 * checkpoint blocks no one; the RESTART after it holds writers off only while it copies what was
 * written since and syncs.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma('synchronous = NORMAL')
db.pragma('busy_timeout = ' + workerData.restartWaitMs)
let copiedBefore = 0
let timer
const pass = () => {
  let behind = false
  try {
    let [copied] = db.pragma('wal_checkpoint(PASSIVE)')
    if (copied.log >= workerData.restartPages) {
      // The restart holds writers off while it copies and syncs what came since the last pass:
      // first catch up without holding them, until a pass is quick (little came meanwhile).
      for (let tries = 0; tries < 5; tries++) {
        const started = performance.now()
        ;[copied] = db.pragma('wal_checkpoint(PASSIVE)')
        if (performance.now() - started < workerData.quickPassMs) break
      }
      db.pragma('wal_checkpoint(RESTART)')
    }
    // Many pages copied: writes are heavy, go again at once.
    behind = copied.checkpointed - copiedBefore >= workerData.busyPages || copied.checkpointed < copiedBefore
    copiedBefore = copied.checkpointed
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) })
  }
  timer = setTimeout(pass, behind ? 0 : workerData.intervalMs)
}
timer = setTimeout(pass, workerData.intervalMs)
parentPort.once('message', () => {
  clearTimeout(timer)
  db.close()
  parentPort.close()
})
`

export interface SqliteCheckpointer {
  /** Stops the worker and closes its connection (before the main one closes: that last close checkpoints and removes the WAL). */
  stop(): Promise<void>
}

/**
 * Copies a SQLite file's write-ahead log into the database from a worker thread with its own
 * connection. SQLite checkpoints by itself inside the commit that crosses 1,000 WAL pages, on
 * the thread that commits: with better-sqlite3 that is the event loop, so every request waiting
 * meanwhile waits for the page copies and the fsyncs too (`bench -- data`: ingest p99 15 ms with
 * it, 5–9 ms without). `setAutocheckpoint` sets the main connection's own (0 while the worker
 * runs). The worker's errors are process warnings (`FLEETGATE_SQLITE_CHECKPOINT`); if it fails,
 * the main connection checkpoints by itself again.
 */
export function startSqliteCheckpointer(file: string, setAutocheckpoint: (pages: number) => void): SqliteCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const workerData = { file, driver, intervalMs: CHECKPOINT_INTERVAL_MS, busyPages: BUSY_PAGES, quickPassMs: QUICK_PASS_MS, restartPages: RESTART_WAL_PAGES, restartWaitMs: RESTART_WAIT_MS }
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData })
  setAutocheckpoint(0)
  worker.unref()
  let exited = false
  const exit = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  void exit.then(() => (exited = true))
  const warn = (message: string) => process.emitWarning(`SQLite checkpoint worker: ${message}`, { code: 'FLEETGATE_SQLITE_CHECKPOINT' })
  worker.on('message', (m: { error?: string }) => m.error && warn(m.error))
  worker.on('error', (err) => {
    setAutocheckpoint(SQLITE_AUTOCHECKPOINT_PAGES)
    warn(err.message)
  })
  return {
    async stop() {
      if (exited) return
      worker.ref() // waited for now: unref'd, its exit alone would not keep the process running
      worker.postMessage('stop')
      await exit
    },
  }
}
