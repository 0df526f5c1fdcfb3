import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsSuitesRunnable, TEST_NATS_URL } from '../helpers/nats.js'
import { startEventsApp, type EventsApp } from './events-kit.js'
import { SseClient } from './sse-client.js'

const login = async (gw: EventsApp, username = 'alice') => {
  const res = await gw.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password: `${username}-password` } })
  expect(res.statusCode).toBe(200)
  return `Bearer ${res.json().token as string}`
}
const logout = (gw: EventsApp, authorization: string) => gw.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization } })

/** Contract §17 (logout ends the token on every instance) applied to §11's open streams. */
describe.each(DIALECTS)('an event stream and the logout of its session, one instance on %s', (dialect) => {
  let gw: EventsApp
  const streams: SseClient[] = []
  beforeAll(async () => {
    gw = await startEventsApp(dialect)
  })
  afterAll(async () => {
    for (const stream of streams) stream.close()
    await gw?.close()
  })

  it('ends the streams of the logged-out session; streams of other sessions stay open', async () => {
    const token = await login(gw)
    const other = await login(gw)
    const ended = await SseClient.open(`${gw.url}/api/v1/events`, token)
    const kept = await SseClient.open(`${gw.url}/api/v1/events`, other)
    streams.push(ended, kept)
    expect([ended.status, kept.status]).toEqual([200, 200])
    expect((await logout(gw, token)).statusCode).toBe(200)
    expect(await ended.ended).toBe('finished')
    expect(ended.comments).toContain('logged out')
    // The other session's stream goes on: it still gets its keep-alive comments.
    const before = kept.comments.length
    await kept.nextComment()
    expect(kept.comments.length).toBeGreaterThan(before)
    expect((await SseClient.open(`${gw.url}/api/v1/events`, token)).status).toBe(401)
  })
})

const runnable = await natsSuitesRunnable({ needsPostgres: true })

describe.skipIf(!runnable)('an event stream and the logout of its session on another instance (PostgreSQL + NATS)', () => {
  let database: TestDatabase
  let a: EventsApp
  let b: EventsApp
  const streams: SseClient[] = []
  beforeAll(async () => {
    database = testDatabase('postgres')
    // The live-session cache outlasts the test: only the broadcast can end the stream.
    a = await startEventsApp('postgres', { NATS_URL: TEST_NATS_URL }, { database, sessions: { liveForMs: 3_600_000 } })
    b = await startEventsApp('postgres', { NATS_URL: TEST_NATS_URL }, { database, sessions: { liveForMs: 3_600_000 } })
  })
  afterAll(async () => {
    for (const stream of streams) stream.close()
    await a?.close()
    await b?.close()
    await database?.cleanup()
  })

  it('ends a stream on B when its session is logged out on A; other sessions stay open', async () => {
    const token = await login(a)
    const other = await login(a)
    const onB = await SseClient.open(`${b.url}/api/v1/events`, token)
    const alsoOnA = await SseClient.open(`${a.url}/api/v1/events`, token)
    const kept = await SseClient.open(`${b.url}/api/v1/events`, other)
    streams.push(onB, alsoOnA, kept)
    expect([onB.status, alsoOnA.status, kept.status]).toEqual([200, 200, 200])
    expect((await logout(a, token)).statusCode).toBe(200)
    expect(await onB.ended).toBe('finished')
    expect(await alsoOnA.ended).toBe('finished')
    expect(onB.comments).toContain('logged out')
    const before = kept.comments.length
    await kept.nextComment()
    expect(kept.comments.length).toBeGreaterThan(before)
  })
})
