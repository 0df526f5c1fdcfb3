/**
 * `npm run bench -- production closes [--machines 5000] [--rounds 3] [--engines sqlite,postgres]`
 *
 * Links closing all at once, as when an instance stops or a site's uplink drops: each of
 * `--machines` productive machines is recorded `offline` (`ProductionStore.linkClosed`, what a
 * closed link costs the database). The baseline, measured in the same run on the same machines
 * just before: one state event per machine, all at once (`storeFrame`: the same rows, a state
 * and the interval it closes, written through the frames' group commit). Target: closes/s ≥ 0.5× that rate. Rounds alternate the
 * two; the figure is the median round's ratio. On a scratch database per engine, dropped at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createScratchDatabase } from '../src/cluster/scratch-database.js'
import { ProductionStore } from '../src/gateway/production/ingest/production-store.js'
import { openStorage, type Storage } from '../src/storage/storage.js'
import { engines, option } from './bench-options.js'

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const TARGET = 0.5

async function addMachines(storage: Storage, ids: string[]): Promise<void> {
  const now = Date.now() / 1000
  for (let i = 0; i < ids.length; i += 1000) {
    await storage.db
      .insertInto('devices')
      .values(ids.slice(i, i + 1000).map((id) => ({ device_id: id, hostname: id, ip: '', version: '1', key_hash: null, last_status: '{}', created_at: now })))
      .execute()
  }
}

const perSecond = (n: number, ms: number) => Math.round((n * 1000) / ms)

/** Each round on machines of its own: productive (untimed), then standby (the baseline, timed), then closed (timed); each step closes an interval of a minute or two. */
async function onEngine(storage: Storage, machines: number, rounds: number): Promise<number> {
  const store = new ProductionStore(storage)
  const ratios: number[] = []
  for (let round = 1; round <= rounds; round++) {
    const ids = Array.from({ length: machines }, (_, i) => `close-${round}-${String(i).padStart(6, '0')}`)
    await addMachines(storage, ids)
    const now = Math.floor(Date.now() / 1000)
    const stateOfAll = (state: string, ts: number) => Promise.all(ids.map((id) => store.storeFrame(id, [{ id: `${state}-${id}`, ts, kind: 'state', state }])))
    await stateOfAll('productive', now - 180)
    let started = performance.now()
    await stateOfAll('standby', now - 120)
    const states = perSecond(machines, performance.now() - started)
    started = performance.now()
    const closed = await Promise.all(ids.map((id) => store.linkClosed(id, 0)))
    const closes = perSecond(machines, performance.now() - started)
    if (closed.some((c) => c?.state !== 'offline')) throw new Error('a machine was not recorded offline')
    ratios.push(closes / states)
    console.log(`  round ${round}: ${closes.toLocaleString('en-US')} closes/s; baseline ${states.toLocaleString('en-US')} state events/s (one a machine, at once); ratio ${ratios.at(-1)!.toFixed(2)}`)
  }
  return [...ratios].sort((a, b) => a - b)[Math.floor(rounds / 2)]!
}

export async function productionCloses(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 5000, { integer: true })
  const rounds = option(args, 'rounds', 3, { integer: true })
  for (const engine of engines(args)) {
    console.log(`production closes on ${engine}: ${machines} machines' links close at once, ${rounds} round(s)`)
    const dir = engine === 'sqlite' ? mkdtempSync(path.join(tmpdir(), 'fleetgate-closes-')) : undefined
    const scratch = engine === 'postgres' ? await createScratchDatabase(PG_URL, 'fleetgate_bench_closes') : undefined
    const storage = await openStorage(scratch ? { kind: 'postgres', url: scratch.url } : { kind: 'sqlite', path: path.join(dir!, 'closes.db') })
    try {
      await storage.migrate()
      const ratio = await onEngine(storage, machines, rounds)
      console.log(`ratio  closes / state events, median: ${ratio.toFixed(2)} (target ≥ ${TARGET}) ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`)
    } finally {
      await storage.close()
      await scratch?.drop()
      if (dir) rmSync(dir, { recursive: true, force: true })
    }
  }
}
