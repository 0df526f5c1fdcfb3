import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/sim/machine/clock.js'
import { PlatformDevice } from '../../src/sim/platform-device.js'

interface Call {
  method: string
  path: string
  headers: Record<string, string>
  body: string | undefined
}

/** A stand-in for the platform: answers by "METHOD /path" and records every call. */
function fakePlatform(answers: Record<string, (call: Call) => { status: number; body?: unknown }>) {
  const calls: Call[] = []
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input))
    const call: Call = {
      method: init?.method ?? 'GET',
      path: url.pathname + url.search,
      headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)),
      body: init?.body as string | undefined,
    }
    calls.push(call)
    const answer = answers[`${call.method} ${url.pathname}`]?.(call) ?? { status: 200, body: { success: true } }
    return new Response(JSON.stringify(answer.body ?? {}), { status: answer.status, headers: { 'content-type': 'application/json' } })
  }) as typeof globalThis.fetch
  return { calls, fetch, json: (call: Call) => JSON.parse(call.body ?? 'null') }
}

const device = (fetch: typeof globalThis.fetch, extra: Partial<ConstructorParameters<typeof PlatformDevice>[0]> = {}) =>
  new PlatformDevice({ baseUrl: 'http://platform.test/', deviceId: 'pnp-iot-01', fetch, clock: new ManualClock(1_710_000_000_000), ...extra })

describe('platform device simulator', () => {
  it('adds itself with the console token and then sends the issued device token', async () => {
    const tokens: string[] = []
    const platform = fakePlatform({
      'POST /api/admin/device/add': () => ({ status: 201, body: { success: true, device: {}, device_token: 'tok-123' } }),
      'POST /v1/device/heartbeat': () => ({ status: 200, body: { success: true, server_time: 1, pending_commands: 0 } }),
    })
    const d = device(platform.fetch, { consoleToken: 'console-T', onDeviceToken: (t) => tokens.push(t) })
    await d.provision()
    await d.heartbeat()
    const [add, beat] = platform.calls
    expect(add).toMatchObject({ method: 'POST', path: '/api/admin/device/add', headers: { 'x-console-token': 'console-T', 'content-type': 'application/json' } })
    expect(platform.json(add!)).toEqual({ device_id: 'pnp-iot-01', model: 'fleetgate-sim-node' })
    expect(tokens).toEqual(['tok-123'])
    expect(beat!.headers['x-device-token']).toBe('tok-123')
    expect(platform.json(beat!)).toMatchObject({ device_id: 'pnp-iot-01', firmware_version: '1.0.3', model: 'fleetgate-sim-node', uptime_s: 0 })
    expect(typeof platform.json(beat!).rssi).toBe('number')
  })

  it('takes 409 from device/add as "already there" and keeps the token it had', async () => {
    const platform = fakePlatform({ 'POST /api/admin/device/add': () => ({ status: 409, body: { success: false, error: 'conflict' } }) })
    const d = device(platform.fetch, { consoleToken: 'T', deviceToken: 'kept-token' })
    await d.provision()
    expect(d.deviceToken).toBe('kept-token')
  })

  it('uploads telemetry as a batch of {ts, values} in ms and logs as ESP-IDF text lines', async () => {
    const platform = fakePlatform({})
    const clock = new ManualClock(1_710_000_000_000)
    const d = device(platform.fetch, { clock })
    d.sample()
    clock.advance(2000)
    d.sample()
    await d.flush()
    const [telemetry, logs] = platform.calls
    expect(telemetry).toMatchObject({ method: 'POST', path: '/v1/device/pnp-iot-01/telemetry/batch' })
    const { records } = platform.json(telemetry!)
    expect(records.map((r: { ts: number }) => r.ts)).toEqual([1_710_000_000_000, 1_710_000_002_000])
    expect(Object.keys(records[0].values)).toEqual(expect.arrayContaining(['temperature', 'humidity', 'rssi', 'uptime_s']))
    expect(logs).toMatchObject({ method: 'POST', path: '/v1/device/pnp-iot-01/logs/batch', headers: { 'content-type': 'text/plain; charset=utf-8' } })
    const lines = logs!.body!.split('\n')
    expect(lines[0]).toBe('I (0) boot: firmware 1.0.3 starting')
    for (const line of lines) expect(line).toMatch(/^[IWED] \(\d+\) [\w.-]+: .+$/)
    await d.flush()
    expect(platform.calls).toHaveLength(2) // nothing left to send
  })

  it('keeps telemetry for a retry when the server fails, drops it when the server refuses it', async () => {
    let status = 503
    const platform = fakePlatform({ 'POST /v1/device/pnp-iot-01/telemetry/batch': () => ({ status }) })
    const d = device(platform.fetch)
    d.sample()
    await d.flush()
    status = 400
    await d.flush()
    await d.flush()
    const batches = platform.calls.filter((c) => c.path.endsWith('/telemetry/batch'))
    expect(batches).toHaveLength(2)
    expect(batches[1]!.body).toBe(batches[0]!.body)
  })

  it('polls commands, runs them and acknowledges each with its result', async () => {
    const platform = fakePlatform({
      'GET /v1/device/pnp-iot-01/commands': () => ({
        status: 200,
        body: {
          success: true,
          commands: [
            { id: 'c1', action: 'bleep', params: { duration: 200 }, created_at: 1 },
            { id: 'c2', action: 'expression', params: { expression: 'happy' }, created_at: 2 },
            { id: 'c3', action: 'sync_time', params: {}, created_at: 3 },
            { id: 'c4', action: 'launch_rocket', params: {}, created_at: 4 },
          ],
        },
      }),
      'POST /v1/device/pnp-iot-01/time/sync': () => ({ status: 200, body: { success: true, offset_ms: -12 } }),
    })
    const d = device(platform.fetch)
    expect(await d.pollCommands()).toBe(4)
    expect(platform.calls[0]!.path).toBe('/v1/device/pnp-iot-01/commands?limit=10')
    const acks = platform.calls.filter((c) => c.path.endsWith('/commands/ack')).map(platform.json)
    expect(acks).toEqual([
      { id: 'c1', success: true, result: { beeped_ms: 200 } },
      { id: 'c2', success: true, result: { expression: 'happy' } },
      { id: 'c3', success: true, result: { offset_ms: -12 } },
      { id: 'c4', success: false, error: 'unsupported action launch_rocket' },
    ])
    expect(d.expression).toBe('happy')
  })

  it('fetches a binding code', async () => {
    const platform = fakePlatform({ 'GET /v1/device/pnp-iot-01/bind/code': () => ({ status: 200, body: { success: true, code: '482913', expires_at: 1 } }) })
    const d = device(platform.fetch)
    expect(await d.fetchBindCode()).toBe('482913')
  })
})
