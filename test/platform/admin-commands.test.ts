import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

/** Contract §8: every listed param required, no unknown params, ranges. */
const VALID: [string, object][] = [
  ['bleep', { duration: 1 }],
  ['bleep', { duration: 10000 }],
  ['sync_time', {}],
  ['ota_check', {}],
  ['ping', {}],
  ['reboot', {}],
  ['expression', { expression: 'happy' }],
  ['hid_text', { text: 'x' }],
  ['hid_text', { text: 't'.repeat(1024) }],
  ['hid_combo', { keys: ['LCTRL', 'C'] }],
  ['hid_combo', { keys: ['LCTRL', 'LSHIFT', 'LALT', 'LGUI', 'ESC', 'F12'] }],
  ['hid_key', { key: 'ENTER' }],
  ['hid_key', { key: '7' }],
  ['hid_click', { button: 'left', hold: 0 }],
  ['hid_click', { button: 'middle', hold: 10000 }],
  ['hid_scroll', { wheel: -127 }],
  ['hid_scroll', { wheel: 127 }],
  ['hid_vendor', { text: 'v'.repeat(64) }],
  ['hid_release', {}],
]

const INVALID: [string, object][] = [
  ['bleep', {}],
  ['bleep', { duration: 0 }],
  ['bleep', { duration: 10001 }],
  ['bleep', { duration: 1.5 }],
  ['bleep', { duration: '100' }],
  ['bleep', { duration: 100, volume: 3 }],
  ['sync_time', { now: 1 }],
  ['ota_check', { force: true }],
  ['ping', { x: 1 }],
  ['reboot', { delay: 5 }],
  ['expression', {}],
  ['expression', { expression: 'furious' }],
  ['hid_text', { text: '' }],
  ['hid_text', { text: 't'.repeat(1025) }],
  ['hid_text', { text: 5 }],
  ['hid_combo', { keys: [] }],
  ['hid_combo', { keys: ['A', 'B', 'C', 'D', 'E', 'F', 'G'] }],
  ['hid_combo', { keys: ['LCTRL', 'NOPE'] }],
  ['hid_combo', { keys: 'LCTRL+C' }],
  ['hid_key', { key: 'a' }],
  ['hid_key', {}],
  ['hid_key', { key: 'ENTER', repeat: 2 }],
  ['hid_click', { button: 'left' }],
  ['hid_click', { hold: 10 }],
  ['hid_click', { button: 'back', hold: 10 }],
  ['hid_click', { button: 'left', hold: -1 }],
  ['hid_click', { button: 'left', hold: 10001 }],
  ['hid_scroll', { wheel: 0 }],
  ['hid_scroll', { wheel: 128 }],
  ['hid_scroll', { wheel: -128 }],
  ['hid_scroll', { wheel: 1.5 }],
  ['hid_vendor', { text: '' }],
  ['hid_vendor', { text: 'v'.repeat(65) }],
  ['hid_release', { all: true }],
  ['launch_rockets', {}],
]

describe.each(DIALECTS)('platform admin commands on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
    await t.addDevice('ac-1')
  })
  afterAll(() => t.close())

  it.each(VALID)('queues %s with %j: 201 and the command', async (action, params) => {
    const res = await t.admin('POST', '/api/admin/device/ac-1/command', { action, params })
    expect(res.statusCode, res.body).toBe(201)
    const { command } = res.json()
    expect(command).toMatchObject({ device_id: 'ac-1', action, params, status: 'pending', attempts: 0 })
    expect(Number.isInteger(command.id)).toBe(true)
    expect(Number.isInteger(command.created_at)).toBe(true)
  })

  it.each(INVALID)('rejects %s with %j: 400, nothing queued', async (action, params) => {
    const before = (await t.admin('GET', '/api/admin/commands?device_id=ac-1&limit=1000')).json().commands.length
    const res = await t.admin('POST', '/api/admin/device/ac-1/command', { action, params })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
    expect((await t.admin('GET', '/api/admin/commands?device_id=ac-1&limit=1000')).json().commands.length).toBe(before)
  })

  it('treats omitted params as {} for an action that takes none, and as missing params otherwise', async () => {
    expect((await t.admin('POST', '/api/admin/device/ac-1/command', { action: 'reboot' })).statusCode).toBe(201)
    expect((await t.admin('POST', '/api/admin/device/ac-1/command', { action: 'bleep' })).statusCode).toBe(400)
  })

  it.each([
    [{ params: {} }],
    [{ action: 'ping', params: {}, extra: 1 }],
    [{ action: 'ping', params: [] }],
    [{ action: 5, params: {} }],
  ])('rejects the command body %j with 400', async (body) => {
    expect((await t.admin('POST', '/api/admin/device/ac-1/command', body)).statusCode).toBe(400)
  })

  it('answers 404 for a command to an unknown device', async () => {
    const res = await t.admin('POST', '/api/admin/device/nobody/command', { action: 'ping', params: {} })
    expect(res.statusCode).toBe(404)
    expect(res.json().error).toBe('unknown_device')
  })

  it('queues an expression and stores it as the device’s current expression', async () => {
    await t.addDevice('ac-face')
    const res = await t.admin('POST', '/api/admin/device/ac-face/expression', { expression: 'sleepy' })
    expect(res.statusCode).toBe(201)
    expect(res.json().command).toMatchObject({ action: 'expression', params: { expression: 'sleepy' }, status: 'pending' })
    expect((await t.device('GET', '/v1/device/ac-face')).json().device.expression).toBe('sleepy')
    expect((await t.admin('GET', '/api/admin/device/ac-face/detail')).json().device.expression).toBe('sleepy')
    // The generic command route does the same.
    await t.admin('POST', '/api/admin/device/ac-face/command', { action: 'expression', params: { expression: 'wink' } })
    expect((await t.device('GET', '/v1/device/ac-face')).json().device.expression).toBe('wink')
  })

  it.each([[{ expression: 'furious' }], [{}], [{ expression: 'happy', extra: 1 }], [{ expression: 3 }]])(
    'rejects the expression body %j with 400 and keeps the current expression',
    async (body) => {
      await t.addDevice('ac-face-2').catch(() => undefined)
      await t.admin('POST', '/api/admin/device/ac-face-2/expression', { expression: 'happy' })
      expect((await t.admin('POST', '/api/admin/device/ac-face-2/expression', body)).statusCode).toBe(400)
      expect((await t.device('GET', '/v1/device/ac-face-2')).json().device.expression).toBe('happy')
    },
  )

  it('queues HID actions on /hid with the same rules', async () => {
    const ok = await t.admin('POST', '/api/admin/device/ac-1/hid', { action: 'hid_combo', params: { keys: ['LGUI', 'L'] } })
    expect(ok.statusCode).toBe(201)
    expect(ok.json().command).toMatchObject({ action: 'hid_combo', params: { keys: ['LGUI', 'L'] } })
    expect((await t.admin('POST', '/api/admin/device/ac-1/hid', { action: 'hid_key', params: { key: 'nope' } })).statusCode).toBe(400)
  })

  it('refuses a non-HID action on /hid', async () => {
    const res = await t.admin('POST', '/api/admin/device/ac-1/hid', { action: 'reboot', params: {} })
    expect(res.statusCode).toBe(400)
  })

  it('delivers queued params to the device exactly as validated', async () => {
    await t.addDevice('ac-deliver')
    await t.admin('POST', '/api/admin/device/ac-deliver/hid', { action: 'hid_click', params: { button: 'right', hold: 120 } })
    const [command] = (await t.device('GET', '/v1/device/ac-deliver/commands')).json().commands
    expect(command).toMatchObject({ action: 'hid_click', params: { button: 'right', hold: 120 } })
  })

  describe('meta', () => {
    it('lists expressions, the USB HID key map and every action with its params', async () => {
      const res = await t.admin('GET', '/api/admin/meta')
      expect(res.statusCode).toBe(200)
      const meta = res.json()
      expect(meta.success).toBe(true)
      expect(meta.expressions).toContain('happy')
      expect(meta.hid_keys).toMatchObject({
        A: 4,
        Z: 29,
        '1': 30,
        '0': 39,
        ENTER: 40,
        ESC: 41,
        BACKSPACE: 42,
        TAB: 43,
        SPACE: 44,
        F1: 58,
        F12: 69,
        RIGHT: 79,
        LEFT: 80,
        DOWN: 81,
        UP: 82,
        LCTRL: 224,
        LSHIFT: 225,
        LALT: 226,
        LGUI: 227,
        RCTRL: 228,
        RSHIFT: 229,
        RALT: 230,
        RGUI: 231,
      })
      const actions = Object.fromEntries(meta.actions.map((a: { action: string; params: object }) => [a.action, a.params]))
      expect(Object.keys(actions).sort()).toEqual(
        ['bleep', 'sync_time', 'ota_check', 'ping', 'reboot', 'expression', 'hid_text', 'hid_combo', 'hid_key', 'hid_click', 'hid_scroll', 'hid_vendor', 'hid_release'].sort(),
      )
      expect(actions.bleep).toEqual({ duration: expect.objectContaining({ type: 'integer', minimum: 1, maximum: 10000 }) })
      expect(actions.ping).toEqual({})
      expect(actions.hid_click.button.enum).toEqual(['left', 'right', 'middle'])
      expect(actions.expression.expression.enum).toEqual(meta.expressions)
      expect(actions.hid_key.key.enum).toEqual(Object.keys(meta.hid_keys))
    })

    it('accepts every meta expression and every meta key name', async () => {
      const meta = (await t.admin('GET', '/api/admin/meta')).json()
      for (const expression of meta.expressions) {
        expect((await t.admin('POST', '/api/admin/device/ac-1/expression', { expression })).statusCode, expression).toBe(201)
      }
      for (const key of Object.keys(meta.hid_keys)) {
        expect((await t.admin('POST', '/api/admin/device/ac-1/hid', { action: 'hid_key', params: { key } })).statusCode, key).toBe(201)
      }
    })
  })

  describe('commands list and clear', () => {
    beforeAll(async () => {
      await t.addDevice('ac-list-a')
      await t.addDevice('ac-list-b')
      for (let i = 0; i < 3; i++) await t.admin('POST', '/api/admin/device/ac-list-a/command', { action: 'ping', params: {} })
      await t.admin('POST', '/api/admin/device/ac-list-b/command', { action: 'ping', params: {} })
      const [first] = (await t.device('GET', '/v1/device/ac-list-a/commands?limit=1')).json().commands
      await t.device('POST', '/v1/device/ac-list-a/commands/ack', { id: first.id, success: true })
    })

    it('lists newest first, filtered by device and status, paged with before', async () => {
      const all = (await t.admin('GET', '/api/admin/commands?device_id=ac-list-a')).json().commands
      expect(all.map((c: { id: number }) => c.id)).toEqual([...all.map((c: { id: number }) => c.id)].sort((a, b) => b - a))
      expect(all.map((c: { status: string }) => c.status)).toEqual(['pending', 'pending', 'done'])
      const page1 = (await t.admin('GET', '/api/admin/commands?device_id=ac-list-a&limit=2')).json()
      expect(page1.commands).toHaveLength(2)
      expect(page1.next_before).toBe(page1.commands[1].id)
      const page2 = (await t.admin('GET', `/api/admin/commands?device_id=ac-list-a&limit=2&before=${page1.next_before}`)).json()
      expect(page2.commands.map((c: { status: string }) => c.status)).toEqual(['done'])
      expect(page2).not.toHaveProperty('next_before')
      const done = (await t.admin('GET', '/api/admin/commands?status=done&device_id=ac-list-a')).json().commands
      expect(done).toHaveLength(1)
    })

    it.each(['limit=0', 'limit=1001', 'limit=x', 'status=queued', 'before=abc', 'before=0', 'device_id=bad%20id'])(
      'rejects ?%s with 400',
      async (query) => {
        expect((await t.admin('GET', `/api/admin/commands?${query}`)).statusCode).toBe(400)
      },
    )

    it('clears only queued commands by default, and the history too with all', async () => {
      const cleared = await t.admin('POST', '/api/admin/commands/clear', { device_id: 'ac-list-a' })
      expect(cleared.json()).toEqual({ success: true, deleted: 2 })
      expect((await t.admin('GET', '/api/admin/commands?device_id=ac-list-a')).json().commands.map((c: { status: string }) => c.status)).toEqual(['done'])
      // ac-list-b untouched.
      expect((await t.admin('GET', '/api/admin/commands?device_id=ac-list-b')).json().commands).toHaveLength(1)
      expect((await t.admin('POST', '/api/admin/commands/clear', { device_id: 'ac-list-a', all: true })).json()).toEqual({ success: true, deleted: 1 })
      expect((await t.admin('GET', '/api/admin/commands?device_id=ac-list-a')).json().commands).toEqual([])
    })

    it('clears every queued command with no body', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/admin/commands/clear', headers: { 'x-console-token': 'test-console-token' } })
      expect(res.statusCode).toBe(200)
      expect(res.json().deleted).toBeGreaterThan(0)
      expect((await t.admin('GET', '/api/admin/commands?status=pending')).json().commands).toEqual([])
    })

    it.each([[{ all: 'yes' }], [{ device_id: 'bad id' }], [{ everything: true }]])('rejects the clear body %j with 400', async (body) => {
      expect((await t.admin('POST', '/api/admin/commands/clear', body)).statusCode).toBe(400)
    })
  })
})
