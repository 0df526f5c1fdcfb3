/**
 * `npm run bench -- proxy [--duration 10] [--connections 50]`: the cost of forwarding.
 * (a) a plain Fastify route returning the position envelope; (b) the same answer from
 * GET /api/v1/devices/{id}/hardware/position, forwarded over a real WebSocket to an
 * in-process device (the SDK's DeviceAgent). autocannon runs in a child process so the load
 * generator does not share the server's event loop. Target: b/a ≥ 0.6.
 */
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { DeviceAgent, ok, RouteTable } from '../src/sdk/index.js'
import { openStorage } from '../src/storage/storage.js'

const POSITION = { x: 120.5, y: 80.25, z: 10, r: 90 }

interface Run {
  rps: number
  /** CPU time of this process (server and device) per request, in µs: steadier than req/s on a shared machine. */
  cpuUs: number
  p50: number
  p99: number
  non2xx: number
  errors: number
}

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`)
  const value = i >= 0 ? Number(args[i + 1]) : fallback
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`)
  return value
}

const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

function autocannon(url: string, seconds: number, connections: number, headers: Record<string, string> = {}): Promise<Run> {
  const cli = createRequire(import.meta.url).resolve('autocannon')
  const args = [cli, '-j', '-c', String(connections), '-d', String(seconds), ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), url]
  const cpu = process.cpuUsage()
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err)
      const used = process.cpuUsage(cpu)
      const r = JSON.parse(stdout)
      resolve({
        rps: r.requests.average,
        cpuUs: (used.user + used.system) / Math.max(1, r.requests.total),
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
      })
    })
  })
}

export default async function proxy(args: string[]): Promise<void> {
  const seconds = option(args, 'duration', 10)
  const connections = option(args, 'connections', 50)

  const plain = Fastify({ logger: false })
  plain.get('/position', async () => ({ success: true, status: 200, data: POSITION }))
  await plain.listen({ port: 0, host: '127.0.0.1' })

  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    CLOUD_AUTH_USERS: JSON.stringify({ bench: { password: 'bench-password', role: 'admin' } }),
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
  })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const gateway = await buildApp(config, { storage, logger: false })
  await gateway.listen({ port: 0, host: '127.0.0.1' })
  const login = await gateway.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bench', password: 'bench-password' } })
  const token = login.json().token as string

  const routes = new RouteTable().get('/hardware/position', () => ok(POSITION))
  const agent = new DeviceAgent({ url: urlOf(gateway), deviceId: 'bench-01', key: 'bench-device-key-0001', version: 'bench', routes, maxConcurrentRequests: 64 })
  const registered = once(agent, 'registered')
  agent.start()
  await registered

  try {
    const direct = `${urlOf(plain)}/position`
    const forwarded = `${urlOf(gateway)}/api/v1/devices/bench-01/hardware/position`
    const auth = { authorization: `Bearer ${token}` }
    console.log(`warming up, then ${seconds} s × ${connections} connections each…`)
    await autocannon(direct, 2, connections)
    await autocannon(forwarded, 2, connections, auth)
    const a = await autocannon(direct, seconds, connections)
    const b = await autocannon(forwarded, seconds, connections, auth)
    const row = (name: string, r: Run) =>
      `${name.padEnd(36)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(3)} ms   p99 ${String(r.p99).padStart(3)} ms   ` +
      `${r.cpuUs.toFixed(0).padStart(4)} µs CPU/req   non-2xx ${r.non2xx}   errors ${r.errors}`
    console.log(row('(a) plain Fastify route', a))
    console.log(row('(b) forwarded over the device link', b))
    const ratio = b.rps / a.rps
    console.log(`ratio b/a: ${ratio.toFixed(2)} req/s (target ≥ 0.60) ${ratio >= 0.6 ? 'OK' : 'BELOW TARGET'}; CPU per request a/b: ${(a.cpuUs / b.cpuUs).toFixed(2)}`)
  } finally {
    await agent.close()
    await gateway.close()
    await plain.close()
  }
}
