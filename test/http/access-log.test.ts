import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/config.js'
import { ACCESS_LOG_SAMPLE } from '../../src/http/access-log.js'
import { serverLogger } from '../../src/http/server-logger.js'
import { openStorage } from '../../src/storage/storage.js'

/** A destination that keeps every written line; `first` resolves with the first one written. */
function lines(): { stream: Writable; lines: string[]; first: Promise<string> } {
  const kept: string[] = []
  let firstWritten!: (line: string) => void
  const first = new Promise<string>((resolve) => (firstWritten = resolve))
  const stream = new Writable({
    write(chunk, _encoding, done) {
      kept.push(...String(chunk).split('\n').filter((l) => l.length > 0))
      if (kept.length > 0) firstWritten(kept[0]!)
      done()
    },
  })
  return { stream, lines: kept, first }
}

async function appLoggingAt(level: string, tty: boolean) {
  const out = lines()
  const storage = await openStorage({ kind: 'sqlite-memory' })
  await storage.migrate()
  const app = await buildApp(loadConfig({ PLATFORM_CONSOLE_TOKEN: 'test-console-token' }), { storage, loggerInstance: serverLogger(level, { tty, destination: out.stream }) })
  await app.ready()
  return { app, lines: out.lines }
}

describe('access log', () => {
  it('writes no per-request line at info except one sampled line per hundred requests', async () => {
    const { app, lines } = await appLoggingAt('info', false)
    const before = lines.length
    for (let i = 0; i < 2 * ACCESS_LOG_SAMPLE; i++) expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    const written = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(written).toHaveLength(2)
    expect(written[0]).toMatchObject({ level: 30, msg: 'request (sampled)', method: 'GET', url: '/healthz', status: 200, sampled: ACCESS_LOG_SAMPLE })
    expect(typeof written[0]!.reqId).toBe('string')
    await app.close()
  })

  it('writes exactly one line per request at debug', async () => {
    const { app, lines } = await appLoggingAt('debug', false)
    const before = lines.length
    for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url: '/healthz' })
    await app.inject({ method: 'GET', url: '/no-such-route' })
    const requestLines = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.url !== undefined)
    expect(requestLines).toHaveLength(6)
    expect(requestLines.every((l) => l.msg === 'request' && l.level === 20)).toBe(true)
    expect(requestLines.at(-1)).toMatchObject({ url: '/no-such-route', status: 404 })
    await app.close()
  })

  it('still logs every server error with its request id whatever the sampling', async () => {
    const { app, lines } = await appLoggingAt('info', false)
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'admin' } })
    const before = lines.length
    const res = await app.inject({ method: 'GET', url: '/api/v1/devices/pnp-absent/hardware/position', headers: { authorization: `Bearer ${login.json().token}` } })
    expect(res.statusCode).toBe(502)
    const errors = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 50)
    expect(errors).toHaveLength(1)
    expect(errors[0]!.reqId).toBe(res.headers['x-request-id'])
    await app.close()
  })
})

describe('log format', () => {
  it('is human-readable on a terminal and JSON otherwise', async () => {
    const pretty = lines()
    serverLogger('info', { tty: true, destination: pretty.stream }).info({ deviceId: 'pnp-1' }, 'device linked')
    const json = lines()
    serverLogger('info', { tty: false, destination: json.stream }).info({ deviceId: 'pnp-1' }, 'device linked')
    // The pretty printer is a stream of its own: its line arrives after a turn or more.
    const prettyLine = await pretty.first
    expect(prettyLine).toMatch(/INFO.*device linked/)
    expect(() => JSON.parse(prettyLine)).toThrow()
    expect(JSON.parse(await json.first)).toMatchObject({ level: 30, msg: 'device linked', deviceId: 'pnp-1' })
  })
})
