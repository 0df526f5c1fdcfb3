/**
 * `npm run bench -- downloads [--downloads 30] [--conditional 30] [--mib 15] [--releases 2]`
 *
 * Contract §6: a fleet downloading the active image at once must not multiply memory; §14:
 * one copy in memory per release being downloaded. Starts `fleetgate serve` (SQLite, own
 * process), publishes `--releases` signed images of `--mib` MiB and activates the first, then
 * runs, for each release at once, `--downloads` concurrent full downloads plus `--conditional`
 * If-None-Match requests against a cold cache — the active one at `…/system.bin`, the others
 * (a rollout's) at `…/releases/{id}/system.bin` — sampling the server's RSS
 * (/proc/<pid>/status) meanwhile. Prints the peak RSS growth over the idle server (target
 * ≤ 150 MiB for 30 × 15 MiB as §6 says, plus one more 15 MiB copy per further release; a copy
 * per download would be 450 MiB per release).
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { generateFirmwareKeys, publicKeyPem } from '../src/firmware/firmware-keys.js'
import { signImage } from '../src/firmware/sign-image.js'
import { option } from './bench-options.js'
import { startServe, type ServedServer } from './bench-serve.js'

const MiB = 1024 * 1024
const ACTIVE_IMAGE = '/api/v1/firmware/slave/system.bin'
const imageOf = (releaseId: string) => `/api/v1/firmware/slave/releases/${releaseId}/system.bin`

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

/** GETs an image and throws the bytes away as they arrive; resolves with the status and byte count. */
function download(url: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    get(url, { headers, agent: false }, (res) => {
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
  const releaseCount = option(args, 'releases', 2, { integer: true })
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-'))
  const keys = generateFirmwareKeys()
  const releases = Array.from({ length: releaseCount }, (_, i) =>
    signImage({
      payload: Buffer.alloc(mib * MiB - 4096, 0x5a).map((_, j) => (j * 31 + i) & 0xff),
      version: { major: 1, minor: 0, revision: 0, build_num: i + 1 },
      product: { magic: 'PNP-SLAVE', hw_version: 1, fw_version: 1, git_sha: 'bench', timestamp: '2026-11-01T00:00:00Z' },
      signingKey: keys.signing.privateKey,
      signerCert: keys.signerCert,
      release: `r-bench-${i + 1}`,
    }),
  )
  const size = Math.max(...releases.map((r) => r.image.length))
  let server: ServedServer | undefined
  try {
    server = await startServe({
      env: { DATA_DIR: dir, FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey), FIRMWARE_MAX_BYTES: String(Math.max(16 * MiB, size)) },
    })
    const base = server.base
    const login = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin' }) })
    const auth = `Bearer ${((await login.json()) as { token: string }).token}`
    for (const release of releases) {
      const form = new FormData()
      form.append('image', new Blob([release.image]), 'system.bin')
      form.append('manifest', JSON.stringify(release.manifest))
      const uploaded = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: auth } })
      if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}: ${await uploaded.text()}`)
    }
    const activated = await fetch(`${base}/api/v1/admin/firmware/slave/releases/r-bench-1/activate`, { method: 'POST', headers: { authorization: auth } })
    if (activated.status !== 200) throw new Error(`activate answered ${activated.status}`)

    // Let the upload's garbage go before the baseline is taken.
    await delay(2000)
    const pid = server.child.pid!
    const idle = rssOf(pid)
    let peak = idle
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10)
    const started = performance.now()
    // Per release: its downloads, then its conditional requests.
    const results = await Promise.all(
      releases.map((release, i) => {
        const url = `${base}${i === 0 ? ACTIVE_IMAGE : imageOf(release.manifest.release)}`
        const etag = `"${release.manifest.system.sha256}"`
        return Promise.all([
          ...Array.from({ length: count }, () => download(url)),
          ...Array.from({ length: conditional }, () => download(url, { 'if-none-match': etag })),
        ])
      }),
    )
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    peak = Math.max(peak, rssOf(pid))

    results.forEach((perRelease, i) => {
      if (perRelease.slice(0, count).some((r) => r.status !== 200 || r.bytes !== releases[i]!.image.length)) throw new Error('a full download failed')
      if (perRelease.slice(count).some((r) => r.status !== 304)) throw new Error('a conditional request was not answered 304')
    })
    const growth = (peak - idle) / MiB
    // §6's bound for one release, plus one more copy of the image per further release.
    const target = 150 + (releaseCount - 1) * mib
    console.log(
      `downloads: ${releaseCount} release(s) at once (the active one${releaseCount > 1 ? ' + by id' : ''}), each ${count} full downloads of a ${(size / MiB).toFixed(1)} MiB image + ${conditional} conditional requests, cold cache, ${seconds.toFixed(2)} s`,
    )
    console.log(`server RSS idle ${(idle / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB: growth ${growth.toFixed(0)} MiB (target ≤ ${target} MiB) ${growth <= target ? 'OK' : 'OVER'}`)
  } finally {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
