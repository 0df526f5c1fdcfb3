import { afterEach, describe, expect, it } from 'vitest'
import { acceptsConnections, killIfRunning, startServerProcess, type ServerProcess } from '../helpers/server-process.js'

/**
 * SHUTDOWN_DRAIN_SECONDS (docs/deploy.md, "Rolling restart"): from SIGTERM on, /readyz answers
 * 503 "draining" while the server still listens and serves every request; the listener closes
 * once the health checker has had SHUTDOWN_DRAIN_CHECKS such answers (or the drain's time is up).
 */
describe('the drain at SIGTERM', () => {
  let server: ServerProcess | undefined
  afterEach(async () => {
    await killIfRunning(server)
  })

  it('answers /readyz "draining" while it still listens and serves, and stops once the health checker was told twice', { timeout: 30_000 }, async () => {
    server = await startServerProcess({ DATABASE_URL: 'sqlite::memory:', SHUTDOWN_DRAIN_SECONDS: '20', SHUTDOWN_DRAIN_CHECKS: '2' })
    const { url } = server
    const port = Number(new URL(url).port)
    // This test is the health checker: it asked /readyz before the SIGTERM.
    expect((await fetch(`${url}/readyz`)).status).toBe(200)

    const signalled = Date.now()
    server.child.kill('SIGTERM')
    await expect.poll(() => server!.stdout().includes('"msg":"draining'), { timeout: 5000, interval: 20 }).toBe(true)
    const first = await fetch(`${url}/readyz`)
    expect(first.status).toBe(503)
    expect(first.headers.get('retry-after')).toBe('2')
    expect(await first.json()).toMatchObject({ success: false, error: 'service_unavailable', status: 'draining' })
    // Still listening, still serving: the load balancer has not taken it out yet.
    expect(await acceptsConnections(port)).toBe(true)
    const served = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin' }) })
    expect(served.status).toBe(200)
    expect(server.child.exitCode).toBeNull()

    expect((await fetch(`${url}/readyz`)).status).toBe(503)
    expect(await server.exited).toBe(0)
    // Told twice: it did not wait for its 20 s.
    expect(Date.now() - signalled).toBeLessThan(10_000)
    expect(server.stdout()).toContain('"drain":"checked"')
  })

  it('drains for SHUTDOWN_DRAIN_SECONDS when no health checker asked, serving all along, then exits 0', { timeout: 30_000 }, async () => {
    server = await startServerProcess({ DATABASE_URL: 'sqlite::memory:', SHUTDOWN_DRAIN_SECONDS: '1' })
    const { url } = server
    const port = Number(new URL(url).port)
    const signalled = Date.now()
    server.child.kill('SIGTERM')
    await expect.poll(() => server!.stdout().includes('"msg":"draining'), { timeout: 5000, interval: 20 }).toBe(true)
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    expect((await fetch(`${url}/readyz`)).status).toBe(503)
    expect(await acceptsConnections(port)).toBe(true)
    expect(await server.exited).toBe(0)
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1000)
    expect(server.stdout()).toContain('"drain":"time"')
  })
})
