import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js'

const CONSOLE_TOKEN = 'crash-console-token'
const WRITERS = 8
const RECORDS_PER_BATCH = 25
/** Kill once this many batches were answered 200: the rest are in flight. */
const KILL_AFTER_BATCHES = 60

const env = (dataDir: string) => ({ DATA_DIR: dataDir, PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN })

async function consoleCall(server: ServerProcess, method: string, url: string, body?: unknown) {
  return fetch(`${server.url}${url}`, {
    method,
    headers: { 'x-console-token': CONSOLE_TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

describe('platform telemetry durability', () => {
  it('keeps every record answered 200 when the server is killed with SIGKILL mid-ingest', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'fg-crash-')), 'data')
    const first = await startServerProcess(env(dataDir))
    expect((await consoleCall(first, 'POST', '/api/admin/device/add', { device_id: 'crash-1', model: 'm' })).status).toBe(201)

    const base = Date.now() - 3_600_000
    const acknowledged = new Map<string, number[]>()
    let answered = 0
    let killed!: () => void
    const killedNow = new Promise<void>((resolve) => (killed = resolve))

    const writer = async (w: number) => {
      const key = `w${w}`
      acknowledged.set(key, [])
      for (let batch = 0; ; batch++) {
        const records = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ ts: base + batch * RECORDS_PER_BATCH + i, values: { [key]: batch } }))
        let status: number
        try {
          const res = await fetch(`${first.url}/v1/device/crash-1/telemetry/batch`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ records }),
          })
          status = res.status
          await res.arrayBuffer()
        } catch {
          return // the server is gone: whatever was not answered is not owed
        }
        expect(status).toBe(200)
        acknowledged.get(key)!.push(...records.map((r) => r.ts))
        if (++answered === KILL_AFTER_BATCHES) {
          first.child.kill('SIGKILL')
          killed()
        }
      }
    }
    await Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), killedNow])
    expect(await first.exited).toBeNull()

    const second = await startServerProcess(env(dataDir))
    try {
      const keys = [...acknowledged.keys()].join(',')
      const res = await consoleCall(second, 'GET', `/api/admin/device/crash-1/telemetry?keys=${keys}&limit=1000`)
      expect(res.status).toBe(200)
      const { series } = (await res.json()) as { series: Record<string, [number, number][]> }
      let total = 0
      for (const [key, acked] of acknowledged) {
        const stored = new Set(series[key]!.map(([ts]) => ts))
        const missing = acked.filter((ts) => !stored.has(ts))
        expect(missing, `${key} lost acknowledged records`).toEqual([])
        total += acked.length
      }
      expect(total).toBeGreaterThanOrEqual(KILL_AFTER_BATCHES * RECORDS_PER_BATCH)
    } finally {
      second.child.kill('SIGTERM')
      await second.exited
    }
  })
})
