import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Env } from '../../src/config/config.js'
import type { Dialect } from '../../src/storage/storage.js'
import { startTestApp, type TestApp, type TestAppOptions } from '../helpers/test-app.js'

/** The console token `startTestApp` configures. */
export const CONSOLE_TOKEN = 'test-console-token'
export const CONSOLE = { 'x-console-token': CONSOLE_TOKEN }

type Payload = InjectOptions['payload']

/** A platform test server plus short-hands for the calls every suite makes. */
export interface PlatformApp extends TestApp {
  /** An admin call with the console token. */
  admin(method: 'GET' | 'POST', url: string, payload?: Payload): Promise<LightMyRequestResponse>
  /** A device call (with its token when given). */
  device(method: 'GET' | 'POST', url: string, payload?: Payload, token?: string): Promise<LightMyRequestResponse>
  /** Adds a device through the admin API; returns its token. */
  addDevice(deviceId: string, model?: string): Promise<string>
}

export async function startPlatformApp(dialect: Dialect, env: Env = {}, options: TestAppOptions = {}): Promise<PlatformApp> {
  const t = await startTestApp(dialect, env, options)
  const call = (app: FastifyInstance, method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: Payload) =>
    app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) })
  const admin: PlatformApp['admin'] = (method, url, payload) => call(t.app, method, url, CONSOLE, payload)
  const device: PlatformApp['device'] = (method, url, payload, token) =>
    call(t.app, method, url, token ? { 'x-device-token': token } : {}, payload)
  return Object.assign(t, {
    admin,
    device,
    async addDevice(deviceId: string, model = 'bot-1') {
      const res = await admin('POST', '/api/admin/device/add', { device_id: deviceId, model })
      if (res.statusCode !== 201) throw new Error(`add ${deviceId}: ${res.statusCode} ${res.body}`)
      return res.json().device_token as string
    },
  })
}
