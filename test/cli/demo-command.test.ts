import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/server-process.js'

interface Rollout {
  state: string
  pause_reason: string | null
  gate: string | null
  counts: { failed: number; installed: number }
}

describe('npm run demo (fleetgate demo)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-demo-'))
  let demo: ReturnType<typeof runCli> | undefined

  afterAll(async () => {
    if (demo && demo.child.exitCode === null) {
      demo.child.kill('SIGKILL')
      await demo.exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('reports the machines’ production history, pnp-02’s bad feeder first, and its rollout is paused by the KPI gate', { timeout: 120_000 }, async () => {
    demo = runCli(['demo'], { DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' })
    const run = demo
    await expect.poll(() => /firmware\s+rollout (\S+) of/.exec(run.out())?.[1], { timeout: 45_000 }).toBeDefined()
    const url = /web console\s+(http:\/\/\S+?)\/\s/.exec(run.out())![1]!
    const rolloutId = /firmware\s+rollout (\S+) of/.exec(run.out())![1]!
    const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin' }) })
    const authorization = `Bearer ${((await login.json()) as { token: string }).token}`
    const get = async <T>(pathname: string) => (await (await fetch(`${url}${pathname}`, { headers: { authorization } })).json()) as T

    // The history arrives as late events: every machine has placements of the last hours at once.
    const withHistory = async () => {
      const { groups } = await get<{ groups: { key: string | null; placed: number }[] }>('/api/v1/production')
      return groups.filter((g) => g.placed > 10_000).map((g) => g.key).sort()
    }
    await expect.poll(withHistory, { timeout: 20_000 }).toEqual(['pnp-01', 'pnp-02', 'pnp-03'])
    const pnp02 = await get<{ feeders: { feeder: string; miss_rate: number }[]; jobs_completed: number }>('/api/v1/devices/pnp-02/production')
    expect(pnp02.feeders[0]!.feeder).toBe('F3')
    expect(pnp02.feeders[0]!.miss_rate).toBeGreaterThan(0.03)
    expect(pnp02.jobs_completed).toBeGreaterThan(0)

    // The demo release misses more: the first stage installs it, and its KPI gate pauses the rollout.
    const rollout = async () => (await get<{ rollout: Rollout }>(`/api/v1/admin/firmware/slave/rollouts/${rolloutId}`)).rollout
    await expect.poll(async () => (await rollout()).state, { timeout: 90_000, interval: 1000 }).not.toBe('running')
    const paused = await rollout()
    expect(paused, run.out()).toMatchObject({ state: 'paused', pause_reason: 'kpi_regression', gate: 'regression' })
    expect(paused.counts.failed).toBe(0)
    expect(paused.counts.installed).toBeGreaterThan(0)
    run.child.kill('SIGTERM')
    await run.exited
  })
})
