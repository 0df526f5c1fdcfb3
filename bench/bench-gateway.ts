/**
 * The fleetgate server as the proxy benchmarks run it: SQLite file database, a bound non-admin
 * user, logs at info as `fleetgate serve` writes them to a pipe (here into /dev/null).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { BindingRepository } from '../src/gateway/devices/binding-repository.js'
import { serverLogger } from '../src/http/server-logger.js'
import { openConfiguredStorage } from '../src/server.js'

export const BENCH_DEVICE = { deviceId: 'bench-01', key: 'bench-device-key-0001' }
export const POSITION_PATH = `/api/v1/devices/${BENCH_DEVICE.deviceId}/hardware/position`

export interface BenchGateway {
  app: FastifyInstance
  url: string
  /** `Authorization` header of the bench user. */
  auth: { authorization: string }
  /** Binds the bench device to the bench user; the device must have registered once. */
  bindDevice(): Promise<void>
  close(): Promise<void>
}

export const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

/** `env`: more configuration, e.g. a longer device time-out for a device under valgrind. */
export async function startBenchGateway(env: Record<string, string> = {}): Promise<BenchGateway> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-'))
  const config = loadConfig({
    // Every bench machine links from this host: one address.
    DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: '100000',
    ...env,
    DATA_DIR: dir,
    CLOUD_AUTH_USERS: JSON.stringify({ bench: { password: 'bench-password', role: 'user' } }),
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
  })
  const storage = await openConfiguredStorage(config)
  const logger = serverLogger('info', { tty: false, destination: pino.destination({ dest: '/dev/null', sync: false, minLength: 8 * 1024 }) })
  const app = await buildApp(config, { storage, loggerInstance: logger })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bench', password: 'bench-password' } })
  return {
    app,
    url: urlOf(app),
    auth: { authorization: `Bearer ${login.json().token as string}` },
    bindDevice: () => new BindingRepository(storage.db).bind({ id: 'bench', username: 'bench' }, BENCH_DEVICE.deviceId).then(() => undefined),
    async close() {
      await app.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
