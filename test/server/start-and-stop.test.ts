import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PRODUCTION_ENV } from '../helpers/production-env.js'
import { runCli, startServerProcess } from '../helpers/server-process.js'

const STRONG_ADMIN = JSON.stringify({ admin: { password: 'a-strong-password', role: 'admin' } })

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'fg-server-'))

describe('fleetgate serve as a process', () => {
  it('starts on the embedded SQLite default, serves, and exits 0 on SIGTERM', async () => {
    const dataDir = path.join(tempDir(), 'data')
    const server = await startServerProcess({ DATA_DIR: dataDir })
    try {
      expect(existsSync(path.join(dataDir, 'fleetgate.db'))).toBe(true)
      const health = await fetch(`${server.url}/healthz`)
      expect(health.status).toBe(200)
      const login = await fetch(`${server.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'admin' }),
      })
      expect(login.status).toBe(200)
      expect(((await login.json()) as { expires_in: number }).expires_in).toBe(259200)
      expect(server.stdout()).toMatch(/default password/)
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
  })

  it('starts in production once it has everything production requires', async () => {
    const users = JSON.stringify({ admin: { password: 'a-strong-password', role: 'admin' } })
    const server = await startServerProcess({ DATA_DIR: path.join(tempDir(), 'data'), ...PRODUCTION_ENV, CLOUD_AUTH_USERS: users })
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
  })

  it('keeps its generated JWT secret across restarts', async () => {
    const dataDir = path.join(tempDir(), 'data')
    const first = await startServerProcess({ DATA_DIR: dataDir })
    const res = await fetch(`${first.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin' }),
    })
    const { token } = (await res.json()) as { token: string }
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    const second = await startServerProcess({ DATA_DIR: dataDir })
    try {
      const refresh = await fetch(`${second.url}/api/v1/auth/refresh`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
      expect(refresh.status).toBe(200)
    } finally {
      second.child.kill('SIGTERM')
      await second.exited
    }
  })

  it.each([
    [{ CLOUD_AUTH_USERS: '{bad json' }, 'CLOUD_AUTH_USERS'],
    [{ CLOUD_AUTH_USERS: JSON.stringify({ x: { password: 'p', role: 'superuser' } }) }, 'CLOUD_AUTH_USERS'],
    [{ CLOUD_JWT_EXPIRE_HOURS: 'soon' }, 'CLOUD_JWT_EXPIRE_HOURS'],
    [{ FIRMWARE_ROOT_PUBKEY: '/nonexistent/root.pem' }, 'FIRMWARE_ROOT_PUBKEY'],
    [{ NODE_ENV: 'production' }, 'CLOUD_AUTH_USERS'],
    [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' }, 'DATABASE_URL'],
    [{ NATS_URL: 'nats://127.0.0.1:1' }, 'NATS_URL'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, PLATFORM_REQUIRE_DEVICE_TOKEN: 'false' }, 'PLATFORM_REQUIRE_DEVICE_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, DEVICE_ENROLL_TOKEN: '' }, 'DEVICE_ENROLL_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, CLOUD_JWT_SECRET: 'x'.repeat(31) }, 'CLOUD_JWT_SECRET'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, PLATFORM_CONSOLE_TOKEN: 'c'.repeat(31) }, 'PLATFORM_CONSOLE_TOKEN'],
  ])('refuses to start with %j: one line naming %s, exit 1, nothing created', async (env, variable) => {
    const dataDir = path.join(tempDir(), 'data')
    const run = runCli(['serve'], { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', ...(env as Record<string, string>) })
    expect(await run.exited).toBe(1)
    const lines = run.err().trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(variable)
    expect(run.out()).not.toMatch(/listening/)
    expect(existsSync(dataDir)).toBe(false)
  })
})
