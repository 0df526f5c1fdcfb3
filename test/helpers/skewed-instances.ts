import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { vi } from 'vitest'
import type { Env } from '../../src/config/config.js'
import type { Dialect } from '../../src/storage/storage.js'
import { testDatabase, type TestDatabase } from './dialects.js'
import { startTestApp, type TestApp } from './test-app.js'

/**
 * Runs `fn` as on a host whose clock is `skewMs` off the real time: `Date` reads the real time
 * moved by `skewMs`, frozen while `fn` runs (timers and I/O stay real). Calls run one at a time,
 * so two instances in one process can each be given a clock of its own.
 */
export async function withClockSkew<T>(skewMs: number, fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: vi.getRealSystemTime() + skewMs })
  try {
    return await fn()
  } finally {
    vi.useRealTimers()
  }
}

export interface TwoInstances {
  a: TestApp
  b: TestApp
  close(): Promise<void>
}

/** Two servers on one database (PostgreSQL: one schema; SQLite: one file), as instances behind a load balancer. */
export async function startTwoInstances(dialect: Dialect, env: Env = {}): Promise<TwoInstances> {
  const database: TestDatabase =
    dialect === 'sqlite' ? testDatabase('sqlite', path.join(mkdtempSync(path.join(tmpdir(), 'fg-two-')), 'fleetgate.db')) : testDatabase(dialect)
  const a = await startTestApp(dialect, { ...env, INSTANCE_ID: 'a' }, { database })
  const b = await startTestApp(dialect, { ...env, INSTANCE_ID: 'b' }, { database })
  return {
    a,
    b,
    async close() {
      await a.close()
      await b.close()
      await database.cleanup()
    },
  }
}
