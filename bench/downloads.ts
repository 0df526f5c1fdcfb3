/**
 * `npm run bench -- downloads [--downloads 30] [--conditional 30] [--mib 15]`
 *
 * Contract §6: a fleet downloading the active image at once must not multiply memory. Starts
 * `fleetgate serve` (SQLite, own process), publishes and activates a signed image of `--mib`
 * MiB, then runs `--downloads` concurrent full downloads plus `--conditional` If-None-Match
 * requests against a cold cache, sampling the server's RSS (/proc/<pid>/status) meanwhile.
 * Prints the peak RSS growth over the idle server (target ≤ 150 MiB for 30 × 15 MiB).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { generateFirmwareKeys, publicKeyPem } from '../src/firmware/firmware-keys.js'
import { signImage } from '../src/firmware/sign-image.js'
import { freePort } from '../src/cluster/local-cluster.js'
import { option } from './bench-options.js'
import { BENCH_NODE_FLAGS } from './node-flags.js'

const MiB = 1024 * 1024
const IMAGE = '/api/v1/firmware/slave/system.bin'


const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

/** GETs the image and throws the bytes away as they arrive; resolves with the status and byte count. */
function download(base: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    get(`${base}${IMAGE}`, { headers, agent: false }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => (bytes += chunk.length))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }))
      res.on('error', reject)
    }).on('error', reject)
  })
}

export default async function downloads(args: string[]): Promise<void> {
  const count = option(args, 'downloads', 30)
  const conditional = option(args, 'conditional', 30)
  const mib = option(args, 'mib', 15)
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-'))
  const keys = generateFirmwareKeys()
  const release = signImage({
    payload: Buffer.alloc(mib * MiB - 4096, 0x5a).map((_, i) => (i * 31) & 0xff),
    version: { major: 1, minor: 0, revision: 0, build_num: 1 },
    product: { magic: 'PNP-SLAVE', hw_version: 1, fw_version: 1, git_sha: 'bench', timestamp: '2026-11-01T00:00:00Z' },
    signingKey: keys.signing.privateKey,
    signerCert: keys.signerCert,
    release: 'r-bench-1',
  })
  const port = await freePort()
  const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url))
  const child = spawn(process.execPath, [...BENCH_NODE_FLAGS, cli, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey),
      FIRMWARE_MAX_BYTES: String(Math.max(16 * MiB, release.image.length)),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  try {
    for (let i = 0; !(await fetch(`${base}/readyz`).then((r) => r.ok, () => false)); i++) {
      if (child.exitCode !== null || i > 200) throw new Error('server did not start')
      await delay(50)
    }
    const login = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin' }) })
    const auth = `Bearer ${((await login.json()) as { token: string }).token}`
    const form = new FormData()
    form.append('image', new Blob([release.image]), 'system.bin')
    form.append('manifest', JSON.stringify(release.manifest))
    const uploaded = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: auth } })
    if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}: ${await uploaded.text()}`)
    const activated = await fetch(`${base}/api/v1/admin/firmware/slave/releases/r-bench-1/activate`, { method: 'POST', headers: { authorization: auth } })
    if (activated.status !== 200) throw new Error(`activate answered ${activated.status}`)

    // Let the upload's garbage go before the baseline is taken.
    await delay(2000)
    const pid = child.pid!
    const idle = rssOf(pid)
    let peak = idle
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10)
    const etag = `"${release.manifest.system.sha256}"`
    const started = performance.now()
    const results = await Promise.all([
      ...Array.from({ length: count }, () => download(base)),
      ...Array.from({ length: conditional }, () => download(base, { 'if-none-match': etag })),
    ])
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    peak = Math.max(peak, rssOf(pid))

    const full = results.slice(0, count)
    const notModified = results.slice(count)
    if (full.some((r) => r.status !== 200 || r.bytes !== release.image.length)) throw new Error('a full download failed')
    if (notModified.some((r) => r.status !== 304)) throw new Error('a conditional request was not answered 304')
    const growth = (peak - idle) / MiB
    console.log(`downloads: ${count} full downloads of a ${(release.image.length / MiB).toFixed(1)} MiB image + ${conditional} conditional requests, cold cache, ${seconds.toFixed(2)} s`)
    console.log(`server RSS idle ${(idle / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB: growth ${growth.toFixed(0)} MiB (target ≤ 150 MiB) ${growth <= 150 ? 'OK' : 'OVER'}`)
  } finally {
    child.kill('SIGTERM')
    if (child.exitCode === null) await once(child, 'exit')
    rmSync(dir, { recursive: true, force: true })
  }
}
