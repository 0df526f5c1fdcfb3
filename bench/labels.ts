/**
 * `npm run bench -- labels [--machines 100000] [--bulk 50000]`
 *
 * Contract §15 at fleet size, on SQLite (a temporary file) and PostgreSQL (a scratch database):
 * `--machines` machines with 5 labels each, a fifth of them linked to a vanished instance. The
 * server runs in this process; every figure is an HTTP request to it and is printed beside its
 * target (issue #33) and a baseline measured in the same run:
 * - the first page (100) of a selector with three requirements, p99 ≤ 50 ms; baseline: the same
 *   page with no selector;
 * - `counts=true` of that selector, p99 ≤ 100 ms; baseline: counts with no selector;
 * - a bulk label change matching `--bulk` machines, ≤ 5 s; baseline: one UPDATE of those rows;
 * - a rollout created from a selector matching `--bulk` machines, ≤ 5 s; baseline: the same
 *   rollout created from the list of their ids.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { createScratchDatabase } from '../src/cluster/scratch-database.js'
import { loadConfig } from '../src/config/config.js'
import { generateFirmwareKeys, publicKeyPem } from '../src/firmware/firmware-keys.js'
import { signImage } from '../src/firmware/sign-image.js'
import { openStorage, type Storage } from '../src/storage/storage.js'
import { option } from './bench-options.js'

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const ROUNDS = 100
const ROWS_PER_INSERT = 2000
const THREE_REQUIREMENTS = 'site in (s1,s2,s3), tier!=bronze, model'

const pad = (i: number) => String(i).padStart(6, '0')

async function seed(storage: Storage, machines: number, bulk: number): Promise<void> {
  const now = Date.now() / 1000
  for (let from = 0; from < machines; from += ROWS_PER_INSERT) {
    const ids = Array.from({ length: Math.min(ROWS_PER_INSERT, machines - from) }, (_, k) => from + k)
    await storage.db
      .insertInto('devices')
      .values(
        ids.map((i) => ({
          device_id: `m-${pad(i)}`,
          hostname: `h-${i}`,
          ip: '10.0.0.1',
          version: `2.${i % 4}`,
          key_hash: null,
          last_status: JSON.stringify({ firmware: `1.8.${i % 3}` }),
          connect_time: now,
          last_heartbeat: i % 5 === 0 ? now : null,
          link_instance: i % 5 === 0 ? 'gone-instance' : null,
          created_at: now,
        })),
      )
      .execute()
    await storage.db
      .insertInto('device_labels')
      .values(
        ids.flatMap((i) => [
          { device_id: `m-${pad(i)}`, key: 'site', value: `s${i % 10}` },
          { device_id: `m-${pad(i)}`, key: 'line', value: `l${i % 20}` },
          { device_id: `m-${pad(i)}`, key: 'customer', value: `c${i % 50}` },
          { device_id: `m-${pad(i)}`, key: 'model', value: `ns-${i % 5}` },
          // The first `bulk` machines are the `batch=b1` the bulk change and the rollout select.
          { device_id: `m-${pad(i)}`, key: i < bulk ? 'batch' : 'tier', value: i < bulk ? 'b1' : ['gold', 'silver', 'bronze'][i % 3]! },
        ]),
      )
      .execute()
  }
  // What autovacuum does soon after a load this size: statistics, and the visibility map index-only scans need.
  if (storage.dialect === 'postgres') await sql`vacuum analyze`.execute(storage.db)
}

async function percentiles(run: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(ROUNDS / 2)]!, p99: times[Math.floor(ROUNDS * 0.99)]! }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await run()
  return (performance.now() - started) / 1000
}

function request(app: FastifyInstance, authorization: string) {
  return async (method: 'GET' | 'POST', url: string, payload?: object, expected = 200) => {
    const res = await app.inject({ method, url, headers: { authorization }, ...(payload ? { payload } : {}) })
    if (res.statusCode !== expected) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    return res.json<Record<string, unknown>>()
  }
}

const line = (what: string, value: string, target: string, baseline: string, ratio: number) =>
  `  ${what.padEnd(44)} ${value.padStart(10)}  (target ${target}; baseline ${baseline}, ×${ratio.toFixed(2)})`

async function measure(databaseUrl: string, machines: number, bulk: number): Promise<void> {
  const keys = generateFirmwareKeys()
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
    CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'bench-admin-pw', role: 'admin' } }),
    FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey),
    LOG_LEVEL: 'warn',
  })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const app = await buildApp(config, { storage, logger: false })
  try {
    const seeded = await timed(() => seed(storage, machines, bulk))
    console.log(`${storage.dialect}: ${machines.toLocaleString('en')} machines × 5 labels stored in ${seeded.toFixed(1)} s`)
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'bench-admin-pw' } })
    const call = request(app, `Bearer ${login.json<{ token: string }>().token}`)
    const selector = encodeURIComponent(THREE_REQUIREMENTS)

    await percentiles(() => call('GET', '/api/v1/devices?limit=100'))
    const plainPage = await percentiles(() => call('GET', '/api/v1/devices?limit=100'))
    const page = await percentiles(() => call('GET', `/api/v1/devices?limit=100&selector=${selector}`))
    console.log(line(`first page, "${THREE_REQUIREMENTS}"`, `p99 ${page.p99.toFixed(1)} ms`, '≤ 50 ms', `no selector p99 ${plainPage.p99.toFixed(1)} ms`, page.p99 / plainPage.p99))

    const plainCounts = await percentiles(() => call('GET', '/api/v1/devices?limit=1&counts=true'))
    const counts = await percentiles(() => call('GET', `/api/v1/devices?limit=1&counts=true&selector=${selector}`))
    console.log(line('counts=true of that selector', `p99 ${counts.p99.toFixed(1)} ms`, '≤ 100 ms', `no selector p99 ${plainCounts.p99.toFixed(1)} ms`, counts.p99 / plainCounts.p99))

    const update = await timed(() => storage.db.updateTable('devices').set({ hostname: 'renamed' }).where('device_id', '<', `m-${pad(bulk)}`).execute())
    let changed = 0
    const bulkSeconds = await timed(async () => {
      changed = Number((await call('POST', '/api/v1/admin/devices/labels', { selector: 'batch=b1', set: { tier: 'platinum', wave: 'w1' }, remove: ['line'] })).changed)
    })
    if (changed !== bulk) throw new Error(`the bulk change changed ${changed} machines, not ${bulk}`)
    console.log(line(`bulk label change, ${bulk.toLocaleString('en')} machines`, `${bulkSeconds.toFixed(2)} s`, '≤ 5 s', `one UPDATE of their rows ${update.toFixed(2)} s`, bulkSeconds / update))

    const signed = signImage({
      payload: Buffer.alloc(4096, 0x5a),
      version: { major: 3, minor: 1, revision: 0, build_num: 7 },
      product: { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'bench00', timestamp: '2026-11-26T00:00:00Z' },
      signingKey: keys.signing.privateKey,
      signerCert: keys.signerCert,
      release: 'r-bench-labels',
    })
    const form = new FormData()
    form.append('image', new Blob([signed.image]), 'system.bin')
    form.append('manifest', JSON.stringify(signed.manifest))
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const uploaded = await fetch(`${address}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: `Bearer ${login.json<{ token: string }>().token}` } })
    if (uploaded.status !== 201) throw new Error(`upload: ${uploaded.status}`)
    const ids = Array.from({ length: bulk }, (_, i) => `m-${pad(i)}`)
    const create = async (body: object) => {
      const created = (await call('POST', '/api/v1/admin/firmware/slave/rollouts', { release_id: 'r-bench-labels', ...body }, 201)) as { rollout: { rollout_id: string; targeted: number } }
      if (created.rollout.targeted !== bulk) throw new Error(`the rollout targets ${created.rollout.targeted} machines, not ${bulk}`)
      await call('POST', `/api/v1/admin/firmware/slave/rollouts/${created.rollout.rollout_id}/abort`)
    }
    const byIds = await timed(() => create({ devices: ids }))
    const bySelector = await timed(() => create({ selector: 'batch=b1' }))
    console.log(line(`rollout from a selector, ${bulk.toLocaleString('en')} machines`, `${bySelector.toFixed(2)} s`, '≤ 5 s', `from their ids ${byIds.toFixed(2)} s`, bySelector / byIds))
  } finally {
    await app.close()
  }
}

export default async function labels(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 100_000, { integer: true })
  const bulk = option(args, 'bulk', 50_000, { integer: true })
  if (bulk > machines) throw new Error('--bulk cannot exceed --machines')
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-labels-'))
  try {
    await measure(`sqlite:${path.join(dir, 'labels.db')}`, machines, bulk)
    const scratch = await createScratchDatabase(PG_URL, 'bench_labels')
    try {
      await measure(scratch.url, machines, bulk)
    } finally {
      await scratch.drop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
