import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { delay } from '../../src/lib/time.js'
import type { TestApp } from '../helpers/test-app.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startTwoInstances, withClockSkew, type TwoInstances } from '../helpers/skewed-instances.js'
import { CONSOLE } from './platform-kit.js'

const MINUTES = 60_000
/** How far instance B's host clock is off: far beyond every time-out below. */
const SKEW_MS = 5 * MINUTES

interface Polled {
  id: number
  attempt: number
}

/**
 * Two instances share the command queue while their hosts' clocks disagree by minutes. The
 * times of a command (queued, delivered) are written by one instance and compared by the
 * other, so both take them from the database's clock: what one instance's host clock says
 * changes nothing.
 */
describe.each(DIALECTS)('the command queue across instances whose clocks disagree, on %s', (dialect) => {
  let seq = 0
  const kit = (two: () => TwoInstances) => {
    const on = (app: TestApp, skewMs = 0) => ({
      admin: (method: 'GET' | 'POST', url: string, payload?: object) =>
        withClockSkew(skewMs, () => app.app.inject({ method, url, headers: CONSOLE, ...(payload ? { payload } : {}) })),
      device: (method: 'GET' | 'POST', url: string, payload?: object) => withClockSkew(skewMs, () => app.app.inject({ method, url, ...(payload ? { payload } : {}) })),
    })
    const device = async () => {
      const id = `skew-${++seq}`
      const res = await on(two().a).admin('POST', '/api/admin/device/add', { device_id: id, model: 'm' })
      expect(res.statusCode, res.body).toBe(201)
      return id
    }
    const queue = async (deviceId: string) => {
      const res = await on(two().a).admin('POST', `/api/admin/device/${deviceId}/command`, { action: 'ping', params: {} })
      expect(res.statusCode, res.body).toBe(201)
      return res.json().command.id as number
    }
    const poll = async (instance: ReturnType<typeof on>, deviceId: string) => {
      const res = await instance.device('GET', `/v1/device/${deviceId}/commands`)
      expect(res.statusCode, res.body).toBe(200)
      return (res.json().commands as Polled[]).map(({ id, attempt }) => ({ id, attempt }))
    }
    const pendingCount = async (instance: ReturnType<typeof on>, deviceId: string) =>
      (await instance.device('POST', '/v1/device/heartbeat', { device_id: deviceId })).json().pending_commands as number
    const status = async (instance: ReturnType<typeof on>, deviceId: string, commandId: number) => {
      const res = await instance.admin('GET', `/api/admin/commands?device_id=${deviceId}`)
      expect(res.statusCode, res.body).toBe(200)
      return (res.json().commands as { id: number; status: string }[]).find((c) => c.id === commandId)?.status
    }
    return { on, device, queue, poll, pendingCount, status }
  }

  describe('B’s clock minutes ahead (ack time-out and TTL: 60 s)', () => {
    let two: TwoInstances
    beforeAll(async () => {
      two = await startTwoInstances(dialect, { COMMAND_ACK_TIMEOUT_SECONDS: '60', COMMAND_TTL_SECONDS: '60' })
    })
    afterAll(() => two?.close())
    const { on, device, queue, poll, pendingCount, status } = kit(() => two)

    it('does not deliver again on B a command A delivered a moment ago, nor count it due', async () => {
      const id = await device()
      const command = await queue(id)
      expect(await poll(on(two.a), id)).toEqual([{ id: command, attempt: 1 }])
      const b = on(two.b, SKEW_MS)
      expect(await poll(b, id)).toEqual([])
      expect(await pendingCount(b, id)).toBe(0)
      expect(await status(b, id, command)).toBe('delivered')
    })

    it('does not expire on B a command A queued a moment ago, and B delivers it', async () => {
      const id = await device()
      const command = await queue(id)
      const b = on(two.b, SKEW_MS)
      expect(await status(b, id, command)).toBe('pending')
      expect(await pendingCount(b, id)).toBe(1)
      expect(await poll(b, id)).toEqual([{ id: command, attempt: 1 }])
    })
  })

  describe('B’s clock minutes behind (ack time-out 0.5 s, TTL 2 s)', () => {
    const ACK_MS = 500
    const TTL_MS = 2000
    let two: TwoInstances
    beforeAll(async () => {
      two = await startTwoInstances(dialect, { COMMAND_ACK_TIMEOUT_SECONDS: String(ACK_MS / 1000), COMMAND_TTL_SECONDS: String(TTL_MS / 1000) })
    })
    afterAll(() => two?.close())
    const { on, device, queue, poll, pendingCount, status } = kit(() => two)

    it('delivers again on B once the ack time-out of A’s delivery has passed', async () => {
      const id = await device()
      const command = await queue(id)
      expect(await poll(on(two.a), id)).toEqual([{ id: command, attempt: 1 }])
      await delay(ACK_MS + 100)
      const b = on(two.b, -SKEW_MS)
      expect(await pendingCount(b, id)).toBe(1)
      expect(await poll(b, id)).toEqual([{ id: command, attempt: 2 }])
    })

    it('does not deliver on B a command A queued longer ago than the TTL', async () => {
      const id = await device()
      const command = await queue(id)
      await delay(TTL_MS + 100)
      const b = on(two.b, -SKEW_MS)
      expect(await pendingCount(b, id)).toBe(0)
      expect(await poll(b, id)).toEqual([])
      expect(await status(b, id, command)).toBe('expired')
    })
  })
})
