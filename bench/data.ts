/**
 * `npm run bench -- data [--dialect sqlite|pg|both] [--points 10000000] [--day-points points/30]
 *   [--devices 100000] [--telemetry-devices 1000] [--samples 300] [--concurrency 4] [--ingest-devices 300]
 *   [--ingest-rate 200] [--ingest-seconds 15] [--prune-timeout 1800]`
 *
 * Does a query stay fast after a year of telemetry? On SQLite (a temp file) and PostgreSQL (a
 * scratch database on BENCH_PG_URL or 127.0.0.1:5432), each removed at the end (also on error
 * or SIGINT):
 * 1. loads --devices platform devices, --points telemetry points over a year on
 *    --telemetry-devices of them (4 keys), commands (points / 20) and logs (points / 10) straight
 *    into the database, VACUUMed, then --day-points more over the last 24 h, not VACUUMed (as
 *    fresh as ingest leaves them: the summary counts them);
 * 2. starts `fleetgate serve` (a child process) and measures over HTTP p50/p99 of the one-key
 *    one-day telemetry query on random devices and days (target p99 ≤ 50 ms), the summary, the
 *    first and a deep devices list page and device detail (p99 ≤ 100 ms);
 * 3. retention: ingest p99 of a steady telemetry load (--ingest-rate batches/s from
 *    --ingest-devices devices), first without pruning, then while the server runs a pass of its
 *    retention job with a TELEMETRY_RETENTION_DAYS that makes half the points expired (target:
 *    p99 during pruning ≤ 2× without), then after; how long pruning took and that the expired
 *    points are gone.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { createScratchDatabase, type ScratchDatabase } from '../src/cluster/scratch-database.js'
import { loadConfig } from '../src/config/config.js'
import { openConfiguredStorage } from '../src/server.js'
import type { Storage } from '../src/storage/storage.js'
import { recountTallies } from '../src/storage/window-tallies.js'
import { summarizeRanges } from '../src/platform/telemetry/point-ranges.js'
import { recountDevices } from '../src/platform/devices/device-tallies.js'
import { TALLIED_STATUSES } from '../src/platform/commands/command-tallies.js'
import { DAY_MS, KEYS, SPAN_DAYS, deviceId, loadData, loadLastDay, type DataShape, type LoadedData } from './bench-data-load.js'
import { startDataServer, type DataServer } from './bench-data-server.js'
import { closedLoop, percentile, steadyLoop, type Latencies, type Request } from './bench-latency.js'
import { choice, option } from './bench-options.js'

const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CONSOLE_TOKEN = 'bench-console-token'
const ADMIN = { 'x-console-token': CONSOLE_TOKEN }
/** Retention long enough that nothing is expired while queries are measured. */
const KEEP_ALL_DAYS = String(SPAN_DAYS + 35)
const QUERY_SECONDS = 60
const RECORDS_PER_BATCH = 5

interface Options {
  shape: DataShape
  dayPoints: number
  samples: number
  concurrency: number
  ingestDevices: number
  ingestRate: number
  ingestSeconds: number
  pruneTimeout: number
}

const fmt = (n: number) => n.toLocaleString('en-US')
const ms = (n: number) => (Number.isNaN(n) ? 'n/a' : `${n.toFixed(1)} ms`)
const verdict = (ok: boolean) => (ok ? 'OK' : 'MISS')
const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!

/** One line: p50/p99 of a latency set beside its p99 target. */
function report(name: string, l: Latencies, targetP99: number): boolean {
  const p99 = percentile(l.ms, 99)
  const ok = l.failed === 0 && p99 <= targetP99
  console.log(`  ${name.padEnd(44)} n=${String(l.ms.length).padStart(4)}  p50 ${ms(percentile(l.ms, 50)).padStart(9)}  p99 ${ms(p99).padStart(9)}  (target p99 ≤ ${targetP99} ms) ${verdict(ok)}${l.failed ? `  ${l.failed} failed` : ''}`)
  return ok
}

/** Where a run's database lives, and how it is removed. */
interface Place {
  env: Record<string, string>
  remove(): Promise<void>
}

async function placeFor(dialect: 'sqlite' | 'pg', cleanups: Set<() => Promise<void>>): Promise<Place> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-data-'))
    const remove = async () => rmSync(dir, { recursive: true, force: true })
    cleanups.add(remove)
    return { env: { DATA_DIR: dir }, remove }
  }
  const db: ScratchDatabase = await createScratchDatabase(PG_URL, 'bench_data')
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-data-'))
  const remove = async () => {
    await db.drop()
    rmSync(dir, { recursive: true, force: true })
  }
  cleanups.add(remove)
  return { env: { DATA_DIR: dir, DATABASE_URL: db.url }, remove }
}

const openPlace = (place: Place) => openConfiguredStorage(loadConfig(place.env))

function serverEnv(place: Place, telemetryRetentionDays: string): Record<string, string> {
  return {
    ...place.env,
    PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN,
    PLATFORM_OFFLINE_SECONDS: '3600',
    TELEMETRY_RETENTION_DAYS: telemetryRetentionDays,
    LOG_RETENTION_DAYS: KEEP_ALL_DAYS,
  }
}

async function measureQueries(server: DataServer, data: LoadedData, o: Options): Promise<boolean> {
  const loop = (next: () => Request) => closedLoop(server.base, next, { count: o.samples, concurrency: o.concurrency, seconds: QUERY_SECONDS })
  const telemetry = await loop(() => {
    const day = data.start + Math.floor(Math.random() * SPAN_DAYS) * DAY_MS
    return { path: `/api/admin/device/${pick(data.telemetryIds)}/telemetry?keys=${pick(KEYS)}&from=${day}&to=${day + DAY_MS - 1}&limit=1000`, headers: ADMIN }
  })
  const summary = await loop(() => ({ path: '/api/admin/summary', headers: ADMIN }))
  const first = await loop(() => ({ path: '/api/admin/devices?limit=100', headers: ADMIN }))
  const deep = await loop(() => ({ path: `/api/admin/devices?limit=100&after=${pick(data.deviceIds)}`, headers: ADMIN }))
  const detail = await loop(() => ({ path: `/api/admin/device/${Math.random() < 0.5 ? pick(data.telemetryIds) : pick(data.deviceIds)}/detail`, headers: ADMIN }))
  return [
    report('telemetry, one key over one day', telemetry, 50),
    report('/api/admin/summary', summary, 100),
    report('devices list, first page (100)', first, 100),
    report('devices list, a deep page (after=random id)', deep, 100),
    report('device detail', detail, 100),
  ].every(Boolean)
}

function ingestLoop(server: DataServer, data: LoadedData, o: Options, seconds: number, until?: Promise<unknown>): Promise<Latencies> {
  const devices = data.telemetryIds.slice(0, o.ingestDevices)
  let turn = 0
  const next = (): Request => {
    const now = Date.now()
    const records = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ ts: now - i, values: Object.fromEntries(KEYS.map((k, j) => [k, 20 + ((turn + i + j) % 50)])) }))
    return {
      method: 'POST',
      path: `/v1/device/${devices[turn++ % devices.length]}/telemetry/batch`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ records }),
    }
  }
  return steadyLoop(server.base, next, { perSecond: o.ingestRate, seconds, maxInFlight: 256, until })
}

const ingestLine = (name: string, l: Latencies) =>
  `  ${name.padEnd(44)} n=${String(l.ms.length).padStart(5)}  p50 ${ms(percentile(l.ms, 50)).padStart(9)}  p99 ${ms(percentile(l.ms, 99)).padStart(9)}` +
  `${l.failed ? `  ${l.failed} failed` : ''}${l.skipped ? `  ${l.skipped} not sent (too many in flight)` : ''}`

async function runDialect(dialect: 'sqlite' | 'pg', o: Options, cleanups: Set<() => Promise<void>>): Promise<boolean> {
  console.log(`\n== ${dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} ==`)
  const place = await placeFor(dialect, cleanups)
  let server: DataServer | undefined
  try {
    let storage: Storage = await openPlace(place)
    const loadStarted = performance.now()
    let data: LoadedData
    try {
      const progress = (what: string) => console.log(`  loaded ${what} (${((performance.now() - loadStarted) / 1000).toFixed(0)} s)`)
      data = await loadData(storage.db, o.shape, Date.now(), progress)
      // A year of use: autovacuum has seen the table (visibility map, statistics).
      if (storage.dialect === 'postgres') await sql`vacuum analyze`.execute(storage.db)
      // …but not the last day's points, as fresh as ingest leaves them.
      await loadLastDay(storage.db, o.dayPoints, Date.now(), progress)
      // Loaded past the stores: the summary's tallies (and SQLite's point ranges) are counted from the rows, as the migrations fill them.
      await recountTallies(storage.db)
      if (storage.dialect === 'sqlite') await summarizeRanges(storage.db)
      await recountDevices(storage.db)
      await storage.db
        .insertInto('platform_command_tallies')
        .columns(['status', 'shard', 'n'])
        .expression((eb) =>
          eb
            .selectFrom('platform_commands')
            .select(['status', sql<number>`0`.as('shard'), eb.fn.countAll().as('n')])
            .where('status', 'in', TALLIED_STATUSES)
            .groupBy('status'),
        )
        .execute()
      // The load's dirty pages written out now, not by checkpoints running into the measured
      // phases (on PostgreSQL they made the no-pruning baseline's p99 278–298 ms).
      if (storage.dialect === 'postgres') await sql`checkpoint`.execute(storage.db)
    } finally {
      await storage.close()
    }
    const points = data.pointsPerSeries * data.telemetryIds.length * KEYS.length
    console.log(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s: ${fmt(data.deviceIds.length)} devices, ${fmt(points)} points (${fmt(data.pointsPerSeries)} per key of ${fmt(data.telemetryIds.length)} devices × ${KEYS.length} keys over ${SPAN_DAYS} days), ${fmt(o.shape.commands)} commands, ${fmt(o.shape.logs)} logs`)

    server = await startDataServer(serverEnv(place, KEEP_ALL_DAYS))
    // Warm-up: the first requests compile routes and fill caches.
    await closedLoop(server.base, () => ({ path: `/api/admin/device/${pick(data.telemetryIds)}/detail`, headers: ADMIN }), { count: 50, concurrency: 2, seconds: 10 })
    console.log(`queries over HTTP (${o.samples} each, ${o.concurrency} at a time):`)
    let ok = await measureQueries(server, data, o)

    console.log(`retention: steady ingest of ${o.ingestRate} batches/s (${RECORDS_PER_BATCH} records × ${KEYS.length} keys) from ${Math.min(o.ingestDevices, data.telemetryIds.length)} devices`)
    const without = await ingestLoop(server, data, o, o.ingestSeconds)
    console.log(ingestLine('ingest, no pruning', without))

    // Half the year expired: one pass of the retention job in this (warm) server, under the same ingest.
    const retentionDays = SPAN_DAYS / 2
    const cutoff = Date.now() - retentionDays * DAY_MS
    const pruning = server.prune(retentionDays)
    const during = await ingestLoop(server, data, o, o.pruneTimeout, pruning)
    const pruned = await Promise.race([pruning, new Promise<undefined>((resolve) => setTimeout(resolve, 1000, undefined))])
    console.log(ingestLine('ingest while pruning', during))
    const after = await ingestLoop(server, data, o, o.ingestSeconds)
    console.log(ingestLine('ingest after pruning', after))
    await server.stop()
    server = undefined

    storage = await openPlace(place)
    let left: number
    try {
      const row = await storage.db.selectFrom('platform_telemetry').select((eb) => eb.fn.countAll<number>().as('n')).where('ts', '<', cutoff).executeTakeFirstOrThrow()
      left = Number(row.n)
    } finally {
      await storage.close()
    }
    const ratio = percentile(during.ms, 99) / percentile(without.ms, 99)
    const pruneOk = pruned !== undefined && left === 0 && during.failed === 0 && ratio <= 2
    console.log(`  pruned ${fmt(pruned?.telemetry ?? 0)} expired points in ${pruned ? `${pruned.seconds.toFixed(1)} s` : `NOT finished within ${o.pruneTimeout} s`}; expired points left: ${fmt(left)}`)
    console.log(`  ingest p99 while pruning / without: ${ratio.toFixed(2)} (target ≤ 2) ${verdict(pruneOk)}`)
    ok = ok && pruneOk
    return ok
  } finally {
    await server?.stop()
    cleanups.delete(place.remove)
    await place.remove()
  }
}

export default async function data(args: string[]): Promise<void> {
  const points = option(args, 'points', 10_000_000, { integer: true })
  const o: Options = {
    shape: {
      points,
      devices: option(args, 'devices', 100_000, { integer: true }),
      telemetryDevices: option(args, 'telemetry-devices', 1000, { integer: true }),
      commands: Math.max(1000, Math.floor(points / 20)),
      logs: Math.max(1000, Math.floor(points / 10)),
    },
    // A day's share of what the API accepts (30 days back): a load through it leaves this many in the last 24 h.
    dayPoints: option(args, 'day-points', Math.floor(points / 30), { integer: true }),
    samples: option(args, 'samples', 300, { integer: true }),
    concurrency: option(args, 'concurrency', 4, { integer: true }),
    ingestDevices: option(args, 'ingest-devices', 300, { integer: true }),
    ingestRate: option(args, 'ingest-rate', 200),
    ingestSeconds: option(args, 'ingest-seconds', 15),
    pruneTimeout: option(args, 'prune-timeout', 1800),
  }
  const which = choice(args, 'dialect', ['sqlite', 'pg', 'both'], 'both')
  const dialects = which === 'both' ? (['sqlite', 'pg'] as const) : ([which] as const)
  // Whatever was created is removed on SIGINT/SIGTERM too; the server child stops with us.
  const cleanups = new Set<() => Promise<void>>()
  const interrupted = (signal: NodeJS.Signals) => {
    console.log(`\n${signal}: removing the benchmark's databases`)
    void Promise.allSettled([...cleanups].map((c) => c())).then(() => process.exit(130))
  }
  process.once('SIGINT', interrupted)
  process.once('SIGTERM', interrupted)
  console.log(`data: ${fmt(o.shape.devices)} devices (first id ${deviceId(0)}), ${fmt(points)} points on ${fmt(o.shape.telemetryDevices)} of them`)
  const results: boolean[] = []
  for (const dialect of dialects) results.push(await runDialect(dialect, o, cleanups))
  console.log(`\ndata: ${results.every(Boolean) ? 'every target met' : 'some targets MISSED'}`)
}
