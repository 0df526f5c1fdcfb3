/**
 * `npm run bench -- ingest [--pg] [--duration 10] [--rounds 3] [--connections 20] [--batch 100] [--keys 2]`
 *
 * Telemetry batches over HTTP (autocannon) against `fleetgate serve` on SQLite in a temp dir,
 * alternating with the same records inserted straight through the storage layer (no HTTP)
 * into a database of its own, round by round; then heartbeats. The target (≥ 0.5, as on
 * PostgreSQL) is against an independent baseline, the **plain storage limit**: the same points
 * as multi-row INSERTs through better-sqlite3 into a plain table `(device_id, key, ts, value)`
 * with no index, one transaction per batch, with fleetgate's pragmas (WAL, synchronous NORMAL).
 * fleetgate's own storage layer in this process (no HTTP) is printed beside it, without a
 * target: a slower store would raise that ratio.
 *
 * `--pg`: the server on PostgreSQL (a database made for the run, BENCH_PG_URL or
 * postgres://postgres@127.0.0.1:5432/postgres to make it), against two baselines, each raw
 * multi-row INSERTs of the same points through `pg` over 8 connections into a fresh database:
 * - the **plain storage limit** (the target, ≥ 0.5): rows `(device_id, key, ts, value double
 *   precision)` into a plain table with no index, what any store of these points must at least write;
 * - fleetgate's own telemetry table (its series ids, index and JSON values), which shows what
 *   the HTTP path adds on top of the schema but hides the schema's own cost.
 * The HTTP rows also print PostgreSQL's CPU per batch when it runs on this machine (all its
 * processes, from /proc), which shares the two cores with the server and the load generator.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { loadConfig } from '../src/config/config.js'
import { TelemetryStore, type TimedRecord } from '../src/platform/telemetry/telemetry-store.js'
import { openConfiguredStorage } from '../src/server.js'
import Database from 'better-sqlite3'
import pg from 'pg'
import { median } from './bench-latency.js'
import { option } from './bench-options.js'
import { postgresCpuSeconds } from './bench-fleet-probes.js'
import { startServe } from './bench-serve.js'

const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const RAW_PG_CONNECTIONS = 8

/** A PostgreSQL database made for this run; `drop()` removes it. */
async function pgDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  await admin.query(`drop database if exists ${name}`)
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL })
      await c.connect()
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    },
  }
}

/**
 * Multi-row INSERTs of the points over 8 connections for `seconds`, each point a row of the
 * columns `row` gives, into `table`; records/s.
 */
async function insertLoop(
  databaseUrl: string,
  table: string,
  columns: string[],
  row: (key: string, ts: number, value: unknown) => unknown[],
  nextBatch: () => TimedRecord[],
  keys: number,
  seconds: number,
): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: RAW_PG_CONNECTIONS })
  try {
    let inserted = 0
    const started = performance.now()
    const worker = async () => {
      while (performance.now() - started < seconds * 1000) {
        const params: unknown[] = []
        const values: string[] = []
        for (const { ts, values: v } of nextBatch()) {
          for (const key in v) {
            const first = params.length + 1
            params.push(...row(key, ts, v[key]))
            values.push(`(${columns.map((_, i) => `$${first + i}`).join(', ')})`)
          }
        }
        await pool.query(`insert into ${table} (${columns.join(', ')}) values ${values.join(', ')}`, params)
        inserted += values.length / keys
      }
    }
    await Promise.all(Array.from({ length: RAW_PG_CONNECTIONS }, worker))
    return rate(inserted, (performance.now() - started) / 1000)
  } finally {
    await pool.end()
  }
}

/** Raw multi-row INSERTs into fleetgate's own telemetry table (its series made first; no upsert, no transaction); records/s. */
async function rawPgRate(databaseUrl: string, dataDir: string, nextBatch: () => TimedRecord[], keys: number, seconds: number): Promise<number> {
  const storage = await openConfiguredStorage(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl }))
  await new TelemetryStore(storage).insert('bench-raw', nextBatch())
  await storage.close()
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const series = (await client.query<{ series_id: number; key: string }>(`select series_id, key from platform_telemetry_series`)).rows
  await client.end()
  const ids = new Map(series.map((r) => [r.key, r.series_id]))
  return insertLoop(databaseUrl, 'platform_telemetry', ['series_id', 'ts', 'value'], (key, ts, value) => [ids.get(key), ts, JSON.stringify(value)], nextBatch, keys, seconds)
}

const PLAIN_TABLE = 'plain_points'

/** The postmaster of the PostgreSQL at `url` when it runs on this machine (the parent of a backend of ours), else undefined. */
async function localPostmaster(url: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid')
    return Number(readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
  } catch {
    return undefined
  } finally {
    await client.end()
  }
}

/** The plain storage limit: the same points as multi-row INSERTs into a table with no index; records/s. */
async function plainPgRate(databaseUrl: string, nextBatch: () => TimedRecord[], keys: number, seconds: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query(`create table if not exists ${PLAIN_TABLE} (device_id text not null, key text not null, ts bigint not null, value double precision not null)`)
  await client.end()
  return insertLoop(databaseUrl, PLAIN_TABLE, ['device_id', 'key', 'ts', 'value'], (key, ts, value) => ['bench-plain', key, ts, value], nextBatch, keys, seconds)
}

/** The SQLite plain storage limit: multi-row INSERTs into a table with no index, a transaction per batch; records/s. */
function plainSqliteRate(file: string, nextBatch: () => TimedRecord[], keys: number, seconds: number): number {
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.exec(`create table if not exists ${PLAIN_TABLE} (device_id text not null, key text not null, ts integer not null, value real not null)`)
    const statements = new Map<number, Database.Statement>()
    const insert = (rows: unknown[][]) => {
      let statement = statements.get(rows.length)
      if (!statement) {
        statement = db.prepare(`insert into ${PLAIN_TABLE} (device_id, key, ts, value) values ${rows.map(() => '(?, ?, ?, ?)').join(', ')}`)
        statements.set(rows.length, statement)
      }
      statement.run(rows.flat())
    }
    const batchInTransaction = db.transaction(insert)
    const started = performance.now()
    let inserted = 0
    while (performance.now() - started < seconds * 1000) {
      const rows: unknown[][] = []
      for (const record of nextBatch()) for (const [key, value] of Object.entries(record.values)) rows.push(['bench-plain', key, record.ts, value])
      batchInTransaction(rows)
      inserted += rows.length / keys
    }
    return rate(inserted, (performance.now() - started) / 1000)
  } finally {
    db.close()
  }
}

interface AutocannonResult {
  '2xx': number
  non2xx: number
  errors: number
  duration: number
  latency: { p50: number; p99: number }
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const CONSOLE_TOKEN = 'bench-console-token'

/**
 * Records of one batch with fresh, increasing timestamps, as a device buffering readings
 * sends them (a fixed body would repeat the same timestamps and measure a pathological
 * index pattern instead).
 */
function recordSource(count: number, keys: number): () => TimedRecord[] {
  let ts = Date.now() - 86_400_000
  const values = recordValues(count, keys)
  return () => values.map((v) => ({ ts: ts++, values: v }))
}

const recordValues = (count: number, keys: number) =>
  Array.from({ length: count }, (_, i) => Object.fromEntries(Array.from({ length: keys }, (_, k) => [`sensor_${k}`, 20 + ((i * (k + 1)) % 100) / 10])))

/**
 * The same records as `recordSource`, as request bodies: only the timestamps change, so the
 * body is assembled from fixed pieces. The load generator shares the machine with the server;
 * serialising 100 records per request there took CPU the server then lacked.
 */
function bodySource(count: number, keys: number): () => string {
  let ts = Date.now() - 86_400_000
  const pieces = recordValues(count, keys).map((v) => `,"values":${JSON.stringify(v)}}`)
  return () => {
    let body = '{"records":['
    for (let i = 0; i < pieces.length; i++) body += `${i === 0 ? '' : ','}{"ts":${ts++}${pieces[i]}`
    return `${body}]}`
  }
}

const rate = (n: number, seconds: number) => Math.round(n / seconds)
const fmt = (n: number) => n.toLocaleString('en-US')


/** `fleetgate serve` in its own process, as deployed: the load generator gets the other core. */
async function startServer(dataDir: string, databaseUrl?: string): Promise<{ base: string; cpu(): number; stop(): Promise<void> }> {
  // BENCH_SERVER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the server process.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const { base, child, stop } = await startServe({
    env: { DATA_DIR: dataDir, PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    nodeArgs,
  })
  return {
    base,
    /** CPU time the server process used so far, in µs. */
    cpu() {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
    },
    stop,
  }
}

/** Inserts batches straight through the storage layer for `seconds`; records/s. */
async function rawRate(dataDir: string, nextBatch: () => TimedRecord[], keys: number, seconds: number): Promise<number> {
  const config = loadConfig({ DATA_DIR: dataDir })
  const storage = await openConfiguredStorage(config)
  try {
    const store = new TelemetryStore(storage)
    const started = performance.now()
    const cpu = process.cpuUsage()
    let inserted = 0
    let batches = 0
    while (performance.now() - started < seconds * 1000) {
      const points = await store.insert('bench-raw', nextBatch())
      inserted += points / keys
      batches++
    }
    const used = process.cpuUsage(cpu)
    console.log(`  raw  CPU ${((used.user + used.system) / batches).toFixed(0)} µs per batch`)
    return rate(inserted, (performance.now() - started) / 1000)
  } finally {
    await storage.close()
  }
}

export default async function ingest(args: string[]): Promise<void> {
  const duration = option(args, 'duration', 10)
  const connections = option(args, 'connections', 20)
  const batch = option(args, 'batch', 100)
  const keys = option(args, 'keys', 2)
  const devices = option(args, 'devices', 1, { integer: true })
  const rounds = option(args, 'rounds', 3)
  const onPg = args.includes('--pg')
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-'))
  const databases = onPg
    ? await Promise.all([pgDatabase(`fleetgate_bench_${process.pid}`), pgDatabase(`fleetgate_bench_raw_${process.pid}`), pgDatabase(`fleetgate_bench_plain_${process.pid}`)])
    : []
  const server = await startServer(path.join(dir, 'server'), databases[0]?.url)
  const postmaster = onPg ? await localPostmaster(databases[0]!.url) : undefined
  try {
    const { base } = server
    const deviceIds = Array.from({ length: devices }, (_, i) => `bench-${String(i + 1).padStart(2, '0')}`)
    for (const device_id of deviceIds) {
      const add = await fetch(`${base}/api/admin/device/add`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-console-token': CONSOLE_TOKEN },
        body: JSON.stringify({ device_id, model: 'bench' }),
      })
      if (add.status !== 201) throw new Error(`device/add answered ${add.status}`)
    }
    let nextDevice = 0
    const nextBody = bodySource(batch, keys)
    const nextRawBatch = recordSource(batch, keys)
    console.log(
      `ingest: server process on ${onPg ? 'PostgreSQL' : `SQLite in ${dir}`}; ${batch} records × ${keys} keys per batch, ${connections} connections; ` +
        `${rounds} round(s) of ${duration} s over HTTP then ${duration} s raw, alternating (the machine's speed drifts between phases)`,
    )
    const target = 0.5
    const ratios: number[] = []
    const schemaRatios: number[] = []
    for (let round = 1; round <= rounds; round++) {
      const serverCpu = server.cpu()
      const pgCpu = postmaster === undefined ? 0 : postgresCpuSeconds(postmaster)
      const http = await autocannon({
        url: base,
        connections,
        duration,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (request: Record<string, unknown>) => ({
              ...request,
              path: `/v1/device/${deviceIds[nextDevice++ % devices]}/telemetry/batch`,
              body: nextBody(),
            }),
          },
        ],
      })
      if (http.non2xx > 0 || http.errors > 0) console.log(`  !! ${http.non2xx} non-2xx answers, ${http.errors} errors`)
      const httpRate = rate(http['2xx'] * batch, http.duration)
      const cpuPerBatch = (server.cpu() - serverCpu) / Math.max(1, http['2xx'])
      const pgCpuPerBatch = postmaster === undefined ? '' : `, PostgreSQL CPU ${(((postgresCpuSeconds(postmaster) - pgCpu) * 1e6) / Math.max(1, http['2xx'])).toFixed(0)} µs per batch (all its processes)`
      console.log(`round ${round}`)
      console.log(
        `  HTTP telemetry: ${fmt(httpRate)} records/s (${fmt(httpRate * keys)} points/s), p50 ${http.latency.p50} ms, p99 ${http.latency.p99} ms, server CPU ${cpuPerBatch.toFixed(0)} µs per batch${pgCpuPerBatch}`,
      )
      if (onPg) {
        const plain = await plainPgRate(databases[2]!.url, nextRawBatch, keys, duration)
        console.log(`  plain storage limit: ${fmt(plain)} records/s (multi-row INSERT of (device_id, key, ts, double) into a plain table, ${RAW_PG_CONNECTIONS} connections)`)
        const own = await rawPgRate(databases[1]!.url, path.join(dir, 'raw'), nextRawBatch, keys, duration)
        console.log(`  own-schema raw: ${fmt(own)} records/s (multi-row INSERT into fleetgate's telemetry table, ${RAW_PG_CONNECTIONS} connections)`)
        ratios.push(httpRate / plain)
        schemaRatios.push(httpRate / own)
        console.log(`  ratio HTTP / plain limit: ${ratios.at(-1)!.toFixed(2)}; HTTP / own-schema raw: ${schemaRatios.at(-1)!.toFixed(2)}`)
      } else {
        const plain = plainSqliteRate(path.join(dir, 'plain.db'), nextRawBatch, keys, duration)
        console.log(`  plain storage limit: ${fmt(plain)} records/s (multi-row INSERT of (device_id, key, ts, real) into a plain SQLite table, a transaction per batch)`)
        const own = await rawRate(path.join(dir, 'raw'), nextRawBatch, keys, duration)
        console.log(`  own-schema raw: ${fmt(own)} records/s (fleetgate's storage layer in this process, one batch at a time, no HTTP)`)
        ratios.push(httpRate / plain)
        schemaRatios.push(httpRate / own)
        console.log(`  ratio HTTP / plain limit: ${ratios.at(-1)!.toFixed(2)}; HTTP / own-schema raw: ${schemaRatios.at(-1)!.toFixed(2)}`)
      }
    }
    const ratio = median(ratios)
    console.log(`ratio  HTTP / plain storage limit, median of ${rounds} round(s): ${ratio.toFixed(3)} (target ≥ ${target}) ${ratio >= target ? 'OK' : 'BELOW TARGET'}`)
    console.log(`ratio  HTTP / own-schema raw, median of ${rounds} round(s): ${median(schemaRatios).toFixed(2)} (no target: shows the HTTP path's cost on top of the schema)`)

    const beats = await autocannon({
      url: `${base}/v1/device/heartbeat`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_id: 'bench-01', firmware_version: '1.0.0', uptime_s: 1, rssi: -60 }),
      connections,
      duration: Math.min(duration, 5),
    })
    console.log(`HTTP   heartbeats: ${fmt(rate(beats['2xx'], beats.duration))}/s, p50 ${beats.latency.p50} ms, p99 ${beats.latency.p99} ms`)
  } finally {
    await server.stop()
    for (const db of databases) await db.drop().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}
