import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/server-process.js'

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

  it('starts a firmware rollout over the demo machines that pauses by itself on the failing one', { timeout: 60_000 }, async () => {
    demo = runCli(['demo'], { DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' })
    const run = demo
    await expect.poll(() => /firmware\s+rollout (\S+) of/.exec(run.out())?.[1], { timeout: 45_000 }).toBeDefined()
    const url = /web console\s+(http:\/\/\S+?)\/\s/.exec(run.out())![1]!
    const rolloutId = /firmware\s+rollout (\S+) of/.exec(run.out())![1]!
    const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin' }) })
    const authorization = `Bearer ${((await login.json()) as { token: string }).token}`
    const state = async () =>
      ((await (await fetch(`${url}/api/v1/admin/firmware/slave/rollouts/${rolloutId}`, { headers: { authorization } })).json()) as { rollout: { state: string; counts: { failed: number } } }).rollout
    await expect.poll(async () => (await state()).state, { timeout: 30_000 }).toBe('paused')
    expect((await state()).counts.failed).toBe(1)
    run.child.kill('SIGTERM')
    await run.exited
  })
})
