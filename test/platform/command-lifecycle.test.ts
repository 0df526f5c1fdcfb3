import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { clockFollowingDate } from '../helpers/test-clocks.js'
import { freezeClock } from './fake-clock.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

const ACK_TIMEOUT_S = 30
const MAX_ATTEMPTS = 3
const TTL_S = 600

describe.each(DIALECTS)('platform command life cycle on %s', (dialect) => {
  let t: PlatformApp
  let clock: ReturnType<typeof freezeClock>
  let seq = 0
  let deviceId: string
  beforeAll(async () => {
    // The queue keeps its times on the database's clock: here one that follows the frozen `Date`, so the test moves it.
    t = await startPlatformApp(
      dialect,
      {
        COMMAND_ACK_TIMEOUT_SECONDS: String(ACK_TIMEOUT_S),
        COMMAND_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        COMMAND_TTL_SECONDS: String(TTL_S),
      },
      { clock: clockFollowingDate() },
    )
  })
  afterAll(() => t.close())
  beforeEach(async () => {
    clock = freezeClock()
    deviceId = `cmd-${++seq}`
    await t.addDevice(deviceId)
  })
  afterEach(() => clock.restore())

  const queue = async (action = 'ping', params: object = {}, id = deviceId) => {
    const res = await t.admin('POST', `/api/admin/device/${id}/command`, { action, params })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().command as { id: number; status: string }
  }
  const poll = async (query = '', id = deviceId) => {
    const res = await t.device('GET', `/v1/device/${id}/commands${query}`)
    expect(res.statusCode, res.body).toBe(200)
    return res.json().commands as { id: number; action: string; params: object; created_at: number; attempt: number }[]
  }
  const ack = (payload: object, id = deviceId) => t.device('POST', `/v1/device/${id}/commands/ack`, payload)
  const adminView = async (commandId: number) => {
    const res = await t.admin('GET', `/api/admin/commands?device_id=${deviceId}`)
    return (res.json().commands as { id: number; status: string; attempts: number; result: unknown; error: string | null }[]).find((c) => c.id === commandId)!
  }

  it('returns pending commands oldest first with id, action, params and created_at, and marks them delivered', async () => {
    const a = await queue('bleep', { duration: 200 })
    clock.advance(1)
    const b = await queue('reboot')
    const commands = await poll()
    expect(commands.map((c) => c.id)).toEqual([a.id, b.id])
    expect(commands[0]).toEqual({ id: a.id, action: 'bleep', params: { duration: 200 }, created_at: clock.now() - 1, attempt: 1 })
    expect(await adminView(a.id)).toMatchObject({ status: 'delivered', attempts: 1 })
    // Delivered and not yet timed out: not handed out again.
    expect(await poll()).toEqual([])
  })

  it('serves 10 by default, at most 50, and the given limit', async () => {
    for (let i = 0; i < 60; i++) await queue()
    expect(await poll('?limit=3')).toHaveLength(3)
    expect(await poll()).toHaveLength(10)
    expect(await poll('?limit=500')).toHaveLength(47)
  })

  it.each(['?limit=0', '?limit=-1', '?limit=abc', '?limit=1.5'])('rejects the poll %s with 400', async (query) => {
    const res = await t.device('GET', `/v1/device/${deviceId}/commands${query}`)
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('bad_request')
  })

  it('delivers a command again, same id, once the ack time-out passes', async () => {
    const c = await queue()
    expect((await poll())[0]).toMatchObject({ id: c.id, attempt: 1 })
    clock.advance(ACK_TIMEOUT_S * 1000 - 1)
    expect(await poll()).toEqual([])
    clock.advance(1)
    expect((await poll())[0]).toMatchObject({ id: c.id, attempt: 2 })
    expect(await adminView(c.id)).toMatchObject({ status: 'delivered', attempts: 2 })
  })

  it('fails a command after COMMAND_MAX_ATTEMPTS deliveries without an ack', async () => {
    const c = await queue()
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect((await poll())[0]).toMatchObject({ id: c.id, attempt })
      clock.advance(ACK_TIMEOUT_S * 1000)
    }
    // The admin view shows it failed before any further poll.
    expect(await adminView(c.id)).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS })
    expect((await adminView(c.id)).error).toMatch(/not acknowledged/)
    expect(await poll()).toEqual([])
  })

  it('expires a command never delivered within COMMAND_TTL_SECONDS', async () => {
    const c = await queue()
    clock.advance(TTL_S * 1000 - 1)
    expect((await t.device('POST', '/v1/device/heartbeat', { device_id: deviceId })).json().pending_commands).toBe(1)
    clock.advance(1)
    expect((await t.device('POST', '/v1/device/heartbeat', { device_id: deviceId })).json().pending_commands).toBe(0)
    expect(await adminView(c.id)).toMatchObject({ status: 'expired', attempts: 0 })
    expect(await poll()).toEqual([])
    const summary = (await t.admin('GET', '/api/admin/summary')).json()
    expect(summary.commands.expired).toBeGreaterThanOrEqual(1)
  })

  it('moves a command to done on a successful ack, keeping the result', async () => {
    const c = await queue()
    await poll()
    const res = await ack({ id: c.id, success: true, result: { pong: 42 } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ success: true, acked: 1, duplicate: false })
    expect(await adminView(c.id)).toMatchObject({ status: 'done', result: { pong: 42 }, error: null })
    clock.advance(ACK_TIMEOUT_S * 1000)
    expect(await poll()).toEqual([])
  })

  it('moves a command to failed on an unsuccessful ack, keeping the error', async () => {
    const c = await queue()
    await poll()
    await ack({ id: c.id, success: false, error: 'speaker missing' })
    expect(await adminView(c.id)).toMatchObject({ status: 'failed', error: 'speaker missing' })
  })

  it('treats a repeated ack as harmless: duplicate true, first outcome kept', async () => {
    const c = await queue()
    await poll()
    await ack({ id: c.id, success: true, result: 'first' })
    const again = await ack({ id: c.id, success: false, error: 'late' })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toMatchObject({ success: true, acked: 1, duplicate: true, duplicate_ids: [c.id] })
    expect(await adminView(c.id)).toMatchObject({ status: 'done', result: 'first' })
  })

  it('acks several commands with {acks:[…]}', async () => {
    const a = await queue()
    const b = await queue()
    await poll()
    const res = await ack({ acks: [{ id: a.id, success: true }, { id: b.id, success: false, error: 'no' }] })
    expect(res.json()).toMatchObject({ success: true, acked: 2, duplicate: false })
    expect((await adminView(a.id)).status).toBe('done')
    expect((await adminView(b.id)).status).toBe('failed')
  })

  it('answers 404 to an ack of another device’s command and applies none of the batch', async () => {
    const other = `${deviceId}-other`
    await t.addDevice(other)
    const theirs = await queue('ping', {}, other)
    const mine = await queue()
    await poll()
    const single = await ack({ id: theirs.id, success: true })
    expect(single.statusCode).toBe(404)
    const batch = await ack({ acks: [{ id: mine.id, success: true }, { id: theirs.id, success: true }] })
    expect(batch.statusCode).toBe(404)
    expect((await adminView(mine.id)).status).toBe('delivered')
    expect((await ack({ id: 999_999_999, success: true })).statusCode).toBe(404)
  })

  it.each([
    [{ id: 1 }],
    [{ success: true }],
    [{ id: '1', success: true }],
    [{ id: 1, success: 'yes' }],
    [{ id: 0, success: true }],
    [{ id: 1, success: true, extra: 1 }],
    [{ acks: [] }],
    [{ acks: [{ id: 1 }] }],
  ])('rejects the ack %j with 400', async (payload) => {
    expect((await ack(payload)).statusCode).toBe(400)
  })

  it('hands a due command to only one of two concurrent polls', async () => {
    const ids: number[] = []
    for (let i = 0; i < 12; i++) ids.push((await queue()).id)
    const [first, second] = await Promise.all([poll('?limit=8'), poll('?limit=8')])
    const delivered = [...first!, ...second!].map((c) => c.id)
    expect(new Set(delivered).size).toBe(delivered.length)
    expect(delivered.every((id) => ids.includes(id))).toBe(true)
    // Whatever was not handed out is still there for the next poll.
    const rest = (await poll('?limit=50')).map((c) => c.id)
    expect([...delivered, ...rest].sort((x, y) => x - y)).toEqual(ids)
  })

  it('does not hand out commands that a concurrent delivery holds, and on PostgreSQL does not wait for its commit', async () => {
    for (let i = 0; i < 4; i++) await queue()
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let taken!: (ids: number[]) => void
    const takenIds = new Promise<number[]>((resolve) => (taken = resolve))
    // Another poller's transaction: it has marked the commands delivered and not committed yet.
    const other = t.storage.db.transaction().execute(async (tx) => {
      const rows = await tx
        .updateTable('platform_commands')
        .set({ status: 'delivered', attempts: 1, delivered_at: clock.now() })
        .where('device_id', '=', deviceId)
        .where('status', '=', 'pending')
        .returning('id')
        .execute()
      taken(rows.map((r) => r.id))
      await released
    })
    const held = await takenIds
    const racing = poll()
    // PostgreSQL: answered while the other transaction is still open (SKIP LOCKED). SQLite has one
    // connection: the racing poll runs after the other transaction.
    if (dialect === 'postgres') expect(await racing).toEqual([])
    release()
    await other
    const handedOut = (await racing).map((c) => c.id)
    expect(handedOut.filter((id) => held.includes(id))).toEqual([])
  })
})
