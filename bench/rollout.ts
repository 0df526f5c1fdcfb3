/**
 * `npm run bench -- rollout [--machines 1000] [--kib 256] [--counts-machines 100000]`
 *
 * Contract §14 at fleet size: a rollout over `--machines` machines with stages [1, 10, 100] and
 * instant installs. The server runs in this process (SQLite in a temporary file); the machines
 * run in a child process as bare WebSocket links (bench-raw-link.ts) that answer the task check
 * with no task, download the offered image over HTTP, check its SHA-256 and report
 * downloading → installing → installed. Prints the time from creation to `completed` (target
 * ≤ 60 s for 1,000 machines), how soon after each stage opened its first offer went out (target
 * ≤ 1 s), and the server's CPU per machine updated — beside a baseline measured in the same
 * run: every machine downloading the same image once, with no rollout (what a rollout cannot
 * avoid doing).
 */
import { createHash } from 'node:crypto'
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { InProcessEventBus } from '../src/events/in-process-event-bus.js'
import { generateFirmwareKeys, publicKeyPem } from '../src/firmware/firmware-keys.js'
import { signImage } from '../src/firmware/sign-image.js'
import type { FleetEvent } from '../src/fleet-event.js'
import { openStorage } from '../src/storage/storage.js'
import { option } from './bench-options.js'
import { rolloutCountsAtScale } from './bench-rollout-counts.js'
import { RawLink, sourceAddress } from './bench-raw-link.js'

const HERE = fileURLToPath(import.meta.url)
const STAGES = [1, 10, 100]
const OPENING_AT_ONCE = 200
const DOWNLOADS_AT_ONCE = 100

type ChildCommand = { cmd: 'link'; linkUrl: string; prefix: string; count: number } | { cmd: 'download'; url: string } | { cmd: 'stats' }
type ChildReply = { linked: number; failed: number } | { seconds: number; failed: number } | { offers: number; duplicates: number; badImages: number }

export default async function rollout(args: string[]): Promise<void> {
  const machines = option(args, 'machines', 1000, { integer: true })
  const countsMachines = option(args, 'counts-machines', 100_000, { integer: true })
  const kib = option(args, 'kib', 256, { integer: true })
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-rollout-'))
  const keys = generateFirmwareKeys()
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(dir, 'fleetgate.db')}`,
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
    CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'bench-admin-pw', role: 'admin' } }),
    FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey),
    LOG_LEVEL: 'warn',
  })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const events = new InProcessEventBus<FleetEvent>()
  const app = await buildApp(config, { storage, logger: false, eventBus: events })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const child = fork(HERE, ['--rollout-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const ask = async <R extends ChildReply>(command: ChildCommand): Promise<R> => {
    child.send(command)
    return ((await once(child, 'message')) as [R])[0]
  }
  try {
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'bench-admin-pw' } })
    const authorization = `Bearer ${login.json<{ token: string }>().token}`
    const signed = signImage({
      payload: Buffer.alloc(kib * 1024, 0x5a),
      version: { major: 3, minor: 1, revision: 0, build_num: 7 },
      product: { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'bench00', timestamp: '2026-11-26T00:00:00Z' },
      signingKey: keys.signing.privateKey,
      signerCert: keys.signerCert,
      release: 'r-bench-3.1.0-7',
    })
    await upload(base, authorization, signed)

    const linked = await ask<{ linked: number; failed: number }>({ cmd: 'link', linkUrl: `${base.replace('http', 'ws')}/api/v1/device-link`, prefix: 'ro', count: machines })
    if (linked.failed > 0) throw new Error(`${linked.failed} of ${machines} links failed`)
    console.log(`${machines} machines linked from a child process; image ${kib} KiB`)

    // Baseline: every machine downloads the image once, no rollout.
    let cpu = process.cpuUsage()
    const baseline = await ask<{ seconds: number; failed: number }>({ cmd: 'download', url: `${base}/api/v1/firmware/slave/releases/r-bench-3.1.0-7/system.bin` })
    const baselineCpu = cpuSince(cpu) / machines
    if (baseline.failed > 0) throw new Error(`${baseline.failed} baseline downloads failed`)

    // The rollout, watched on the event bus.
    const stageOpened = new Map<number, number>()
    const firstOffer = new Map<number, number>()
    let completedAt = 0
    const done = new Promise<void>((resolve) => {
      events.subscribe((event) => {
        const now = performance.now()
        if (event.kind === 'rollout') {
          if (!stageOpened.has(event.data.stage)) stageOpened.set(event.data.stage, now)
          if (event.data.state === 'completed') {
            completedAt = now
            resolve()
          }
          if (event.data.state === 'paused') resolve()
        } else if (event.kind === 'rollout-device' && event.data.state === 'offered' && !firstOffer.has(event.data.stage)) {
          firstOffer.set(event.data.stage, now)
        }
      })
    })
    cpu = process.cpuUsage()
    const started = performance.now()
    const created = await app.inject({ method: 'POST', url: '/api/v1/admin/firmware/slave/rollouts', headers: { authorization }, payload: { release_id: 'r-bench-3.1.0-7', stages: STAGES } })
    if (created.statusCode !== 201) throw new Error(`rollout creation: ${created.statusCode} ${created.body}`)
    const limit = setTimeout(() => undefined, 600_000)
    await Promise.race([done, once(child, 'exit').then(() => Promise.reject(new Error('the machines process ended')))])
    clearTimeout(limit)
    const rolloutCpu = cpuSince(cpu) / machines
    if (!completedAt) throw new Error('the rollout paused: some machines failed')
    const seconds = (completedAt - started) / 1000
    const stats = await ask<{ offers: number; duplicates: number; badImages: number }>({ cmd: 'stats' })

    console.log(`rollout of ${machines} machines, stages [${STAGES.join(', ')}]: completed in ${seconds.toFixed(1)} s (target ≤ 60 s) ${seconds <= 60 ? 'OK' : 'ABOVE TARGET'}`)
    const latencies = STAGES.map((_, k) => (firstOffer.get(k)! - stageOpened.get(k)!) / 1000)
    const worst = Math.max(...latencies)
    console.log(`first offer after a stage opened: ${latencies.map((s, k) => `stage ${k} ${(s * 1000).toFixed(0)} ms`).join(', ')} (target ≤ 1 s) ${worst <= 1 ? 'OK' : 'ABOVE TARGET'}`)
    console.log(`offers received: ${stats.offers} (${stats.duplicates} duplicates, ${stats.badImages} images failing their SHA-256)`)
    console.log(`server CPU per machine updated: ${(rolloutCpu / 1000).toFixed(2)} ms; baseline (one download of the image, no rollout): ${(baselineCpu / 1000).toFixed(2)} ms → ratio ${(rolloutCpu / baselineCpu).toFixed(2)}`)
    console.log(`wall time: rollout ${seconds.toFixed(1)} s vs baseline downloads ${baseline.seconds.toFixed(1)} s → ratio ${(seconds / baseline.seconds).toFixed(2)}`)
  } finally {
    child.kill('SIGTERM')
    if (child.exitCode === null) await once(child, 'exit')
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`counts at fleet size (--counts-machines ${countsMachines}):`)
  await rolloutCountsAtScale(countsMachines)
}

const cpuSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start)
  return used.user + used.system
}

async function upload(base: string, authorization: string, signed: ReturnType<typeof signImage>): Promise<void> {
  const form = new FormData()
  form.append('image', new Blob([signed.image]), 'system.bin')
  form.append('manifest', JSON.stringify(signed.manifest))
  const res = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization } })
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`)
}

/** GETs `url` and resolves with its SHA-256 (hex), or rejects. */
function downloadSha(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        return reject(new Error(`HTTP ${res.statusCode}`))
      }
      const hash = createHash('sha256')
      res.on('data', (chunk: Buffer) => hash.update(chunk))
      res.on('end', () => resolve(hash.digest('hex')))
      res.on('error', reject)
    }).on('error', reject)
  })
}

/** Runs `job` over 0…count-1 with at most `width` at once. */
async function pool(count: number, width: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await job(next++)
  }))
}

/** Child process: the machines. */
async function runMachines(parent: ChildProcess | NodeJS.Process): Promise<void> {
  const links: RawLink[] = []
  let base = ''
  let offers = 0
  let duplicates = 0
  let badImages = 0
  const offered = new Set<string>()

  const takeOffer = async (link: RawLink, deviceId: string, offer: { rollout_id: string; release_id: string; url: string; sha256: string }) => {
    offers++
    if (offered.has(deviceId)) duplicates++
    offered.add(deviceId)
    const status = (state: string, extra: Record<string, unknown> = {}) =>
      link.send(JSON.stringify({ type: 'firmware-status', rollout_id: offer.rollout_id, release_id: offer.release_id, state, ...extra }))
    try {
      const sha = await downloadSha(`${base}${offer.url}`)
      if (sha !== offer.sha256) {
        badImages++
        return status('failed', { error: 'sha256 mismatch' })
      }
      status('downloading', { progress: 100 })
      status('installing', { progress: 100 })
      status('installed')
    } catch (err) {
      status('failed', { error: String(err) })
    }
  }

  const linkAll = async (linkUrl: string, prefix: string, count: number) => {
    const url = new URL(linkUrl)
    base = `http://${url.host}`
    let failed = 0
    await pool(count, OPENING_AT_ONCE, (i) =>
      new Promise<void>((resolve) => {
        const deviceId = `${prefix}-${String(i).padStart(5, '0')}`
        const link: RawLink = new RawLink(url, sourceAddress(i), (text) => {
          const frame = JSON.parse(text) as { type: string; id?: string; path?: string; rollout_id: string; release_id: string; url: string; sha256: string }
          if (frame.type === 'registered') {
            const beat = () => link.send(JSON.stringify({ type: 'heartbeat', status: { state: 'idle' } }))
            beat()
            setInterval(beat, 15_000).unref()
            return resolve()
          }
          if (frame.type === 'request') {
            const data = frame.path === '/tasks/current' ? { task: null } : { error: 'not_found' }
            return link.send(JSON.stringify({ type: 'response', id: frame.id, status: frame.path === '/tasks/current' ? 200 : 404, data }))
          }
          if (frame.type === 'firmware-offer') void takeOffer(link, deviceId, frame)
        })
        links.push(link)
        link.socket.once('upgraded', () =>
          link.send(JSON.stringify({ type: 'register', device_id: deviceId, key: `bench-key-${deviceId}-0000`, hostname: deviceId, version: 'bench' })),
        )
        link.socket.on('error', () => undefined)
        link.socket.on('close', () => {
          failed++
          resolve()
        })
      }),
    )
    return { linked: count - failed, failed }
  }

  parent.on('message', (command: ChildCommand) => {
    void (async () => {
      if (command.cmd === 'link') return parent.send!(await linkAll(command.linkUrl, command.prefix, command.count))
      if (command.cmd === 'download') {
        const started = performance.now()
        let failed = 0
        await pool(links.length, DOWNLOADS_AT_ONCE, async () => {
          await downloadSha(command.url).catch(() => failed++)
        })
        return parent.send!({ seconds: (performance.now() - started) / 1000, failed })
      }
      parent.send!({ offers, duplicates, badImages })
    })()
  })
  process.on('SIGTERM', () => {
    for (const link of links) link.socket.destroy()
    process.exit(0)
  })
}

if (process.argv[2] === '--rollout-child') void runMachines(process)
