import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { openConfiguredStorage } from '../../src/server.js'
import { killIfRunning, startServerProcess, type ServerProcess } from '../helpers/server-process.js'

const CONSOLE_TOKEN = 'stop-while-writing-token'
const DEVICES = ['sw-0', 'sw-1', 'sw-2', 'sw-3']
/** Requests answered before SIGTERM: at `debug` each writes an access line, enough to fill the unread stdout many times over. */
const ANSWERED_BEFORE_SIGTERM = 4000
/** A hang detector, not a timing: a stop takes seconds (the keep-alive drain), a hung server forever. */
const EXIT_BOUND_MS = 30_000

describe('fleetgate serve stopping while it is busy', () => {
  it('exits 0 on SIGTERM while devices write and nobody reads its log, and every acknowledged point is stored', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'fg-stop-')), 'data')
    let server: ServerProcess | undefined
    try {
      server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN })
      const { url } = server
      for (const device_id of DEVICES) {
        const add = await fetch(`${url}/api/admin/device/add`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-console-token': CONSOLE_TOKEN },
          body: JSON.stringify({ device_id, model: 'm' }),
        })
        expect(add.status).toBe(201)
      }
      // The log's reader stops reading (a stuck collector, a benchmark that never reads the pipe).
      server.child.stdout!.pause()

      const acknowledged: { device: string; value: number }[] = []
      let answered = 0
      let exited = false
      void server.exited.then(() => (exited = true))
      const write = async (device: string) => {
        for (let value = 0; !exited; value++) {
          try {
            const res = await fetch(`${url}/v1/device/${device}/telemetry/batch`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ records: [{ values: { n: value } }] }),
            })
            answered++
            if (res.status === 200) acknowledged.push({ device, value })
          } catch {
            return // the server closed its port
          }
        }
      }
      const writers = DEVICES.map(write)
      while (answered < ANSWERED_BEFORE_SIGTERM) await sleep(20)
      server.child.kill('SIGTERM')
      const outcome = await Promise.race([server.exited, sleep(EXIT_BOUND_MS, 'still running')])
      expect(outcome).toBe(0)
      await Promise.all(writers)

      const storage = await openConfiguredStorage(loadConfig({ DATA_DIR: dataDir }))
      try {
        const rows = await storage.db
          .selectFrom('platform_telemetry')
          .innerJoin('platform_telemetry_series', 'platform_telemetry_series.series_id', 'platform_telemetry.series_id')
          .select(['platform_telemetry_series.device_id as device', 'platform_telemetry.value'])
          .execute()
        const stored = new Set(rows.map((r) => `${r.device}/${r.value}`))
        expect(acknowledged.length).toBeGreaterThanOrEqual(ANSWERED_BEFORE_SIGTERM / 2)
        expect(acknowledged.filter((a) => !stored.has(`${a.device}/${a.value}`))).toEqual([])
      } finally {
        await storage.close()
      }
    } finally {
      await killIfRunning(server)
    }
  }, 120_000)
})
