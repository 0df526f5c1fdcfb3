/**
 * The write side of `npm run bench -- production` (contract §16): production events over the
 * device link, per instance, on SQLite (a temporary file) and PostgreSQL (a scratch database).
 * `--machines` machines each send frames of 50 events (placements with feeder and nozzle counts,
 * state changes, faults, jobs), keeping `--window` frames unacknowledged, for `--seconds`.
 * The machines run in a child process (`fork(this file)`), as machines are not part of the
 * instance: building, sending and answering their frames never takes the server's event loop.
 * Baseline and ingest alternate for two rounds, the best of each counts (a shared machine's
 * load drifts). Printed beside its target and a baseline measured in the same run:
 * - events stored per second, ≥ 0.5× the baseline: the same events as 50-row INSERTs into a
 *   plain table of the raw columns, one transaction each, from as many writers as machines;
 * - p99 from a frame's sending to its acknowledgement.
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import WebSocket from 'ws'
import { DEVICE_LINK_PATH } from '@fleetgate/device-agent/protocol'
import { buildApp } from '../src/app.js'
import { createScratchDatabase } from '../src/cluster/scratch-database.js'
import { loadConfig } from '../src/config/config.js'
import { openStorage, type Storage } from '../src/storage/storage.js'
import { engines, option, type Engine } from './bench-options.js'

const HERE = fileURLToPath(import.meta.url)
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const EVENTS_PER_FRAME = 50
const ROUNDS = 2
const FEEDERS = ['F01', 'F02', 'F03', 'F04', 'F05', 'F06']
const NOZZLES = ['N1', 'N2']

export interface IngestOptions {
  machines: number
  window: number
  seconds: number
  engines: Engine[]
}

export function ingestOptions(args: string[]): IngestOptions {
  return {
    machines: option(args, 'machines', 20, { integer: true }),
    window: option(args, 'window', 4, { integer: true }),
    seconds: option(args, 'seconds', 10),
    engines: engines(args),
  }
}

type Event = Record<string, unknown> & { id: string; ts: number; kind: string }

/** The n-th frame of a machine: 50 events a tenth of a second apart, starting a day ago. */
function frameEvents(machine: number, n: number, start: number): Event[] {
  const events: Event[] = []
  for (let k = 0; k < EVENTS_PER_FRAME; k++) {
    const i = n * EVENTS_PER_FRAME + k
    const ts = start + i * 0.1
    const id = `e${i}`
    if (k === 0) events.push({ id, ts, kind: 'state', state: n % 5 === 4 ? 'unscheduled_down' : 'productive', ...(n % 5 === 4 ? { reason: 'parts_exhausted' } : {}) })
    else if (k === 1) events.push({ id, ts, kind: n % 2 === 0 ? 'job_started' : 'job_ended', job_id: `job-${machine}-${n >> 1}`, ...(n % 2 === 0 ? { order_id: 'O-1', boards_planned: 10 } : { result: 'completed', boards_done: 10 }) })
    else if (k % 16 === 2) events.push({ id, ts, kind: 'fault', fault: 'pickup_error', feeder: FEEDERS[k % FEEDERS.length], message: 'vacuum low' })
    else {
      const feeders = FEEDERS.slice(0, 3).map((feeder, f) => ({ feeder: FEEDERS[(k + f) % FEEDERS.length] ?? feeder, placed: 4, missed: f === 0 ? 1 : 0 }))
      events.push({ id, ts, kind: 'placements', placed: 12, missed: 1, job_id: `job-${machine}-${n >> 1}`, feeders, nozzles: NOZZLES.map((nozzle) => ({ nozzle, placed: 6, missed: 0 })) })
    }
  }
  return events
}

interface IngestResult {
  eventsPerSecond: number
  p99: number
  p50: number
}

interface LinksJob {
  linkUrl: string
  options: IngestOptions
  start: number
  round: number
}

/** Runs the machines of one round in a fresh child process. */
async function ingestInChild(job: LinksJob): Promise<IngestResult> {
  const child = fork(HERE, ['--production-links'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  child.send(job)
  const exited = once(child, 'exit')
  const [result] = (await Promise.race([once(child, 'message'), exited.then(([code]) => [{ error: `exited with ${String(code)} before answering` }])])) as [IngestResult | { error: string }]
  if (child.exitCode === null) await exited
  if ('error' in result) throw new Error(`production links: ${result.error}`)
  return result
}

/** Machines over real links: each keeps `window` frames unacknowledged until `seconds` have passed. */
async function ingestOverLinks(linkUrl: string, options: IngestOptions, start: number, round: number): Promise<IngestResult> {
  const latencies: number[] = []
  let stored = 0
  const deadline = performance.now() + options.seconds * 1000
  const began = performance.now()
  await Promise.all(
    Array.from({ length: options.machines }, async (_, m) => {
      const socket = new WebSocket(linkUrl)
      await once(socket, 'open')
      const deviceId = `bench-prod-${round}-${m}`
      const sentAt = new Map<string, number>()
      let next = 0
      let done: () => void
      let fail: (err: Error) => void
      const finished = new Promise<void>((resolve, reject) => ((done = resolve), (fail = reject)))
      socket.on('close', (code) => fail(new Error(`link ${deviceId} closed with ${code}`)))
      const send = () => {
        if (performance.now() >= deadline) {
          if (sentAt.size === 0) done()
          return
        }
        const events = frameEvents(m, next++, start)
        sentAt.set(events[0]!.id, performance.now())
        socket.send(JSON.stringify({ type: 'production', events }))
      }
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; ids?: string[]; rejected?: unknown[] }
        if (frame.type === 'registered') {
          for (let w = 0; w < options.window; w++) send()
          return
        }
        if (frame.type !== 'production-ack') return
        if (frame.rejected!.length > 0) return fail(new Error(`rejected: ${JSON.stringify(frame.rejected!.slice(0, 2))}`))
        const first = frame.ids![0]!
        latencies.push(performance.now() - sentAt.get(first)!)
        sentAt.delete(first)
        stored += frame.ids!.length
        send()
      })
      socket.send(JSON.stringify({ type: 'register', device_id: deviceId, key: `bench-key-${deviceId}-0123456789`, hostname: deviceId, version: '1', rated_cph: 4000 }))
      await finished
      socket.removeAllListeners('close')
      socket.close()
    }),
  )
  const elapsed = (performance.now() - began) / 1000
  latencies.sort((a, b) => a - b)
  return { eventsPerSecond: stored / elapsed, p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN, p50: latencies[Math.floor(latencies.length / 2)] ?? NaN }
}

/** The baseline: the same events, 50-row INSERTs into a plain table of the raw columns, one transaction each. */
async function plainInserts(storage: Storage, options: IngestOptions, start: number): Promise<number> {
  await sql`create table if not exists bench_plain_events (device_id varchar(64), event_id varchar(64), ts double precision, kind varchar(16), state varchar(20), reason varchar(64), job_id varchar(64), placed integer, missed integer, body text, received_at double precision)`.execute(storage.db)
  let stored = 0
  const deadline = performance.now() + options.seconds * 1000
  const began = performance.now()
  await Promise.all(
    Array.from({ length: options.machines }, async (_, m) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const rows = frameEvents(m, n, start).map((e) => ({
          device_id: `bench-prod-${m}`,
          event_id: e.id,
          ts: e.ts,
          kind: e.kind,
          state: (e.state as string | undefined) ?? null,
          reason: (e.reason as string | undefined) ?? null,
          job_id: (e.job_id as string | undefined) ?? null,
          placed: (e.placed as number | undefined) ?? null,
          missed: (e.missed as number | undefined) ?? null,
          body: JSON.stringify(e),
          received_at: Date.now() / 1000,
        }))
        await sql`insert into bench_plain_events (device_id, event_id, ts, kind, state, reason, job_id, placed, missed, body, received_at) values ${sql.join(
          rows.map((r) => sql`(${r.device_id}, ${r.event_id}, ${r.ts}, ${r.kind}, ${r.state}, ${r.reason}, ${r.job_id}, ${r.placed}, ${r.missed}, ${r.body}, ${r.received_at})`),
        )}`.execute(storage.db)
        stored += rows.length
      }
    }),
  )
  return stored / ((performance.now() - began) / 1000)
}

async function measure(databaseUrl: string, options: IngestOptions): Promise<void> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, PLATFORM_CONSOLE_TOKEN: 'bench-console-token', LOG_LEVEL: 'warn' })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const app = await buildApp(config, { storage, logger: false })
  try {
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const linkUrl = `${address.replace(/^http/, 'ws')}${DEVICE_LINK_PATH}`
    // The load of a shared machine drifts: baseline and ingest alternate, the best round of each counts.
    let baseline = 0
    let ingest: IngestResult = { eventsPerSecond: 0, p99: NaN, p50: NaN }
    for (let round = 0; round < ROUNDS; round++) {
      const start = Date.now() / 1000 - 86_400 + round * 3600
      baseline = Math.max(baseline, await plainInserts(storage, options, start))
      const measured = await ingestInChild({ linkUrl, options, start, round })
      if (measured.eventsPerSecond > ingest.eventsPerSecond) ingest = measured
    }
    const ratio = ingest.eventsPerSecond / baseline
    console.log(`${storage.dialect}: ${options.machines} machines, frames of ${EVENTS_PER_FRAME} events, ${options.window} unacknowledged each, ${options.seconds} s`)
    console.log(
      `  ${'events stored per second'.padEnd(34)} ${Math.round(ingest.eventsPerSecond).toLocaleString('en').padStart(10)}  (target ≥ 0.5× baseline; baseline 50-row INSERTs into a plain table ${Math.round(baseline).toLocaleString('en')}/s, ×${ratio.toFixed(2)})`,
    )
    console.log(`  ${'frame → production-ack'.padEnd(34)} ${`p99 ${ingest.p99.toFixed(1)} ms`.padStart(10)}  (p50 ${ingest.p50.toFixed(1)} ms)`)
  } finally {
    await app.close()
  }
}

/** Runs the ingest part on SQLite, then on PostgreSQL. */
export async function productionIngest(args: string[]): Promise<void> {
  const options = ingestOptions(args)
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-production-'))
  try {
    if (options.engines.includes('sqlite')) await measure(`sqlite:${path.join(dir, 'production.db')}`, options)
    if (!options.engines.includes('postgres')) return
    const scratch = await createScratchDatabase(PG_URL, 'bench_production')
    try {
      await measure(scratch.url, options)
    } finally {
      await scratch.drop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--production-links') {
  process.once('message', ({ linkUrl, options, start, round }: LinksJob) => {
    ingestOverLinks(linkUrl, options, start, round).then(
      (result) => process.send!(result, () => process.exit(0)),
      (err: Error) => process.send!({ error: err.message }, () => process.exit(1)),
    )
  })
}
