/**
 * `npm run bench -- links [--links 18000]`: server memory per device link and registration
 * rate. The devices run in a child process (bare TCP WebSocket clients, one heartbeat at
 * registration and every 15 s) so their memory and CPU do not count; the server's RSS is measured after a full GC
 * before and after they link. Targets: ≤ 12 KB per link, ≥ 2,000 links/s. Each process needs
 * one descriptor per link (the open-file limit here is 20,000).
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Registry, collectDefaultMetrics } from 'prom-client'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { openStorage } from '../src/storage/storage.js'
import { median } from './bench-latency.js'
import { option } from './bench-options.js'
import { RawLink, sourceAddress } from './bench-raw-link.js'

const HERE = fileURLToPath(import.meta.url)
/** Links being opened at once (a sliding window; the server lets 1,000 sockets wait for registration). */
const OPENING_AT_ONCE = 500

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Resident bytes of V8's young generation (new space), which V8 grows under load up to a size it takes from the memory the process may use. */
export const youngGenerationBytes = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0

/** What V8 sized its heap from: the process's memory cgroup limit, or the machine's memory when it has none. */
function memoryLimitText(): string {
  const limit = process.constrainedMemory()
  return limit > 0 && limit < totalmem() ? `this process's memory limit of ${(limit / 2 ** 20).toFixed(0)} MiB` : `the machine's ${(totalmem() / 2 ** 30).toFixed(0)} GiB (no memory limit; BENCH_MEMORY_MAX=<MiB> sets one)`
}

async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return process.memoryUsage().rss
}

/** BENCH_PROFILE=<file.cpuprofile>: a CPU profile of the server during registration only. */
async function profileIf(file: string | undefined): Promise<(() => Promise<void>) | undefined> {
  if (!file) return undefined
  const { Session } = await import('node:inspector/promises')
  const { writeFileSync } = await import('node:fs')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return async () => {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}

/** Opens `count` links from a child process; resolves once all registered and sent a heartbeat. */
export async function openLinks(linkUrl: string, prefix: string, count: number) {
  const child = fork(HERE, ['--links-child', linkUrl, prefix, String(count)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const [message] = (await once(child, 'message')) as [{ linked: number; failed: number; seconds: number; cpu: number }]
  if (message.failed > 0) throw new Error(`${message.failed} of ${count} links failed`)
  return {
    /** From the first connect to the last `registered` frame, as the devices saw it. */
    seconds: message.seconds,
    /** CPU the device process used opening the links, in µs. */
    cpu: message.cpu,
    async close() {
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

export default async function links(args: string[]): Promise<void> {
  const count = option(args, 'links', 18000, { integer: true })
  const config = loadConfig({
    // BENCH_DATABASE_URL / BENCH_NATS_URL: the same run on PostgreSQL and the NATS bus (an empty database, as registrations are first links).
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'sqlite::memory:',
    ...(process.env.BENCH_NATS_URL ? { NATS_URL: process.env.BENCH_NATS_URL } : {}),
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token', CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'bench-admin-pw', role: 'admin' } }),
    // Every bench link comes from this host: one address.
    DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: '100000' })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const app = await buildApp(config, { storage, logger: false })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const linkUrl = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/device-link`
  const linked = async () => Number(/^fleetgate_device_links (\d+)/m.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1])
  try {
    // Warm every code path (and the allocator) before the baseline.
    const warm = await openLinks(linkUrl, 'warm', 200)
    await warm.close()
    while ((await linked()) > 0) await new Promise((resolve) => setTimeout(resolve, 50))
    const before = await settledRss()
    const youngBefore = youngGenerationBytes()
    const profiling = await profileIf(process.env.BENCH_PROFILE)
    const cpu = process.cpuUsage()
    const fleet = await openLinks(linkUrl, 'bench', count)
    const used = process.cpuUsage(cpu)
    await profiling?.()
    const seconds = fleet.seconds
    if ((await linked()) !== count) throw new Error(`expected ${count} links, the server holds ${await linked()}`)
    const after = await settledRss()
    const perLink = (after - before) / count / 1024
    const perSecond = count / seconds
    console.log(`${count} links registered and heartbeating in ${seconds.toFixed(1)} s: ${perSecond.toFixed(0)} links/s (target ≥ 2,000) ${perSecond >= 2000 ? 'OK' : 'BELOW TARGET'}`)
    const cpuPerLink = (used.user + used.system) / count
    console.log(`server CPU per registration: ${cpuPerLink.toFixed(0)} µs (one core's worth: ${(1e6 / cpuPerLink).toFixed(0)} links/s; on a shared machine the wall-clock rate lags this)`)
    console.log(`device process CPU per link: ${(fleet.cpu / count).toFixed(0)} µs (the devices share the machine's 2 cores with the server)`)
    console.log(`server RSS ${(before / 2 ** 20).toFixed(1)} MiB → ${(after / 2 ** 20).toFixed(1)} MiB`)
    console.log(`RSS per link: ${perLink.toFixed(1)} KB (target ≤ 12 KB) ${perLink <= 12 ? 'OK' : 'ABOVE TARGET'}`)
    const young = youngGenerationBytes()
    console.log(
      `  of which V8's young generation grew ${((young - youngBefore) / 2 ** 20).toFixed(1)} MiB (${((young - youngBefore) / count / 1024).toFixed(1)} KB a link), to ${(young / 2 ** 20).toFixed(1)} MiB: ` +
        `not per link, and sized from ${memoryLimitText()} (docs/deploy.md, "Sizing")`,
    )
    await scrapeCost(count, () => app.inject({ method: 'GET', url: '/metrics' }))
    await fleet.close()
  } finally {
    await app.close()
  }
}

/**
 * What a Prometheus scrape of `/metrics` costs with every link open: the event loop does nothing
 * else meanwhile. The baseline, in the same process at the same moment, is prom-client's own
 * default metrics alone (which fleetgate used as they are until 2026-11-30).
 */
async function scrapeCost(count: number, scrape: () => Promise<unknown>): Promise<void> {
  const defaults = new Registry()
  collectDefaultMetrics({ register: defaults })
  const timed = async (run: () => Promise<unknown>) => {
    const times: number[] = []
    for (let i = 0; i < 7; i++) {
      const started = performance.now()
      await run()
      times.push(performance.now() - started)
    }
    return median(times)
  }
  await scrape()
  const [ours, theirs] = [await timed(scrape), await timed(() => defaults.metrics())]
  console.log(
    `a /metrics scrape with ${count} links open: ${ours.toFixed(1)} ms (median of 7), prom-client's default metrics alone ${theirs.toFixed(1)} ms: ` +
      `${(ours / theirs).toFixed(2)}× (no target; the event loop waits meanwhile)`,
  )
}

/** Child process: opens the links, reports once every one registered and sent a heartbeat, then keeps them up. */
async function runDevices(linkUrl: string, prefix: string, count: number): Promise<void> {
  let failed = 0
  const links: RawLink[] = []
  const url = new URL(linkUrl)
  const linkOne = (i: number) =>
    new Promise<void>((resolve) => {
      const link: RawLink = new RawLink(url, sourceAddress(i), (text) => {
        if ((JSON.parse(text) as { type: string }).type !== 'registered') return
        const beat = () => link.send(JSON.stringify({ type: 'heartbeat', status: { state: 'idle', uptime_s: process.uptime() } }))
        beat()
        setInterval(beat, 15_000).unref()
        resolve()
      })
      links.push(link)
      link.socket.once('upgraded', () =>
        link.send(JSON.stringify({ type: 'register', device_id: `${prefix}-${i}`, key: `bench-key-${prefix}-${i}-0000`, hostname: `${prefix}-${i}`, version: 'bench' })),
      )
      link.socket.on('error', () => undefined)
      link.socket.on('close', () => {
        failed++
        resolve()
      })
    })
  const started = performance.now()
  const cpu = process.cpuUsage()
  let next = 0
  const opener = async () => {
    while (next < count) await linkOne(next++)
  }
  await Promise.all(Array.from({ length: Math.min(OPENING_AT_ONCE, count) }, opener))
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  // Let the last heartbeats reach the server before reporting.
  await new Promise((resolve) => setTimeout(resolve, 500))
  process.send!({ linked: count - failed, failed, seconds, cpu: used.user + used.system })
  process.on('SIGTERM', () => {
    for (const link of links) link.socket.destroy()
    process.exit(0)
  })
  setInterval(() => undefined, 60_000)
}

if (process.argv[2] === '--links-child') {
  const [, , , linkUrl, prefix, count] = process.argv
  void runDevices(linkUrl!, prefix!, Number(count))
}
