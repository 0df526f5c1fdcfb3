/**
 * `npm run bench -- login-flood [--concurrency 300] [--samples 100]`
 *
 * Issue #35: a login flood must not take the server down. The server runs in a child process
 * (`fleetgate serve`, SQLite in a temporary directory, the default argon2id cost, TRUST_PROXY
 * 127.0.0.1 so that each flood client has its own forwarded address and the per-address limit
 * does not hide the hashing). Waves of `--concurrency` concurrent logins (the next wave once
 * every login of the last one is answered), a third with the right password, the rest wrong;
 * meanwhile `GET /readyz`
 * and an authenticated `GET /api/v1/devices` are timed one after another. Each p99 and max is
 * printed beside its target (≤ 1 s) and the baseline: the same two requests with no flood, in
 * the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { hashPasswordSync } from '../src/auth/password-hash.js'
import { option } from './bench-options.js'
import { startServe, type ServedServer } from './bench-serve.js'

const TARGET_MS = 1000
const RIGHT = 'operator-password'

interface Stats {
  p50: number
  p99: number
  max: number
}

const stats = (times: number[]): Stats => {
  const sorted = [...times].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! }
}

async function timed(url: string, headers: Record<string, string>, expect: number): Promise<number> {
  const started = performance.now()
  const res = await fetch(url, { headers })
  await res.arrayBuffer()
  if (res.status !== expect) throw new Error(`${url} answered ${res.status}`)
  return performance.now() - started
}

/** `samples` of each probe, alternating, one at a time. */
async function probe(base: string, auth: string, samples: number): Promise<{ readyz: number[]; devices: number[] }> {
  const readyz: number[] = []
  const devices: number[] = []
  for (let i = 0; i < samples; i++) {
    readyz.push(await timed(`${base}/readyz`, {}, 200))
    devices.push(await timed(`${base}/api/v1/devices`, { authorization: auth }, 200))
    await delay(10)
  }
  return { readyz, devices }
}

export default async function loginFlood(args: string[]): Promise<void> {
  const concurrency = option(args, 'concurrency', 300, { integer: true })
  const samples = option(args, 'samples', 100, { integer: true })
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-login-flood-'))
  const users = { operator: { password_hash: hashPasswordSync(RIGHT), role: 'admin', display_name: 'Operator' } }
  let server: ServedServer | undefined
  try {
    server = await startServe({ env: { DATA_DIR: dir, TRUST_PROXY: '127.0.0.1', CLOUD_AUTH_USERS: JSON.stringify(users) } })
    const base = server.base
    const login = (username: string, password: string, address: string) =>
      fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({ username, password }),
      })
    const first = await login('operator', RIGHT, '192.0.2.1')
    const auth = `Bearer ${((await first.json()) as { token: string }).token}`
    await probe(base, auth, 20) // warm-up
    const baseline = await probe(base, auth, samples)

    // The flood: waves of `concurrency` concurrent logins until the probes are done.
    let flooding = true
    let sent = 0
    let waves = 0
    const outcomes = new Map<string, number>()
    const loginTimes: number[] = []
    const one = async () => {
      {
        const n = sent++
        // A new address every 20 logins: 30 a minute per address is not what refuses them.
        const address = `10.${(n >> 16) & 0xff}.${(n >> 8) & 0xff}.${Math.floor(n / 20) & 0xff}`
        const right = n % 3 === 0
        const started = performance.now()
        const res = await login(right ? 'operator' : `guess-${n % 1000}`, right ? RIGHT : `wrong-${n}`, address).catch(() => undefined)
        loginTimes.push(performance.now() - started)
        await res?.arrayBuffer()
        const key = res ? String(res.status) : 'error'
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
      }
    }
    const floodStarted = performance.now()
    const flood = (async () => {
      while (flooding) {
        waves++
        await Promise.all(Array.from({ length: concurrency }, one))
      }
    })()
    await delay(200) // the first wave is under way
    const flooded = await probe(base, auth, samples)
    flooding = false
    await flood
    const floodSeconds = (performance.now() - floodStarted) / 1000

    const line = (name: string, during: number[], before: number[]) => {
      const d = stats(during)
      const b = stats(before)
      const ok = d.p99 <= TARGET_MS && d.max <= TARGET_MS ? 'ok' : 'MISSED'
      console.log(
        `${name.padEnd(22)} flood p50 ${d.p50.toFixed(1)}, p99 ${d.p99.toFixed(1)} ms, max ${d.max.toFixed(1)} ms (target ≤ ${TARGET_MS} ms: ${ok}); ` +
          `baseline p50 ${b.p50.toFixed(1)}, p99 ${b.p99.toFixed(1)} ms, max ${b.max.toFixed(1)} ms`,
      )
    }
    console.log(`login flood: ${waves} waves of ${concurrency} concurrent logins in ${floodSeconds.toFixed(1)} s, ${sent} sent (${(sent / floodSeconds).toFixed(0)}/s)`)
    console.log(`  answers: ${[...outcomes].sort().map(([k, v]) => `${k} ×${v}`).join(', ')}; login p50 ${stats(loginTimes).p50.toFixed(0)} ms, p99 ${stats(loginTimes).p99.toFixed(0)} ms`)
    line('GET /readyz', flooded.readyz, baseline.readyz)
    line('GET /api/v1/devices', flooded.devices, baseline.devices)
  } finally {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
