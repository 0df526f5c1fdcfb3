import { describe, expect, it } from 'vitest'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { FrameError, parseDeviceFrame, parseFrame, parseGatewayFrame, ProductionEvent, ProductionFrame } from '@fleetgate/device-agent/protocol'

const register = { type: 'register', device_id: 'pnp-01', key: 'k'.repeat(16), hostname: 'pnp-01', version: '2.3.1' }
const request = { type: 'request', id: 'r1', method: 'GET', path: '/hardware/position', query: {}, body: null, user: { id: 'u', username: 'u', role: 'user' } }
const text = (value: unknown) => JSON.stringify(value)

describe('device-link frames', () => {
  it('accepts every frame of contract §4 as written there', () => {
    const frames = [
      { ...register, ip: '192.168.1.20', enroll_token: 'enroll' },
      { type: 'registered', device_id: 'pnp-01', server_time: 1710000000.25 },
      { type: 'heartbeat', status: { state: 'idle' } },
      request,
      { type: 'response', id: 'r1', status: 200, data: { x: 1 } },
    ]
    for (const frame of frames) expect(parseFrame(text(frame))).toEqual(frame)
  })

  it('refuses text that is not a JSON object or names no known type', () => {
    expect(() => parseFrame('not json')).toThrow(FrameError)
    expect(() => parseFrame('[1]')).toThrow(/not a JSON object/)
    expect(() => parseFrame(text({ type: 'hello' }))).toThrow(/unknown frame type/)
    expect(() => parseFrame(text({ id: 'x' }))).toThrow(/unknown frame type/)
  })

  it('refuses a register frame with a key outside 16–256 characters or an invalid device id', () => {
    expect(() => parseFrame(text({ ...register, key: 'short' }))).toThrow(/key/)
    expect(() => parseFrame(text({ ...register, key: 'k'.repeat(257) }))).toThrow(/key/)
    expect(() => parseFrame(text({ ...register, device_id: '..' }))).toThrow(/device_id/)
    expect(() => parseFrame(text({ ...register, device_id: 'a/b' }))).toThrow(/device_id/)
    const { hostname: _, ...withoutHostname } = register
    expect(() => parseFrame(text(withoutHostname))).toThrow(/hostname/)
  })

  it('refuses a response whose id is not a string, naming the frame type for the caller', () => {
    try {
      parseFrame(text({ type: 'response', id: 7, status: 200, data: null }))
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(FrameError)
      expect((err as FrameError).frameType).toBe('response')
      expect((err as Error).message).toMatch(/id/)
    }
  })

  it('refuses a response without data or with a status outside 100–599', () => {
    expect(() => parseFrame(text({ type: 'response', id: 'a', status: 200 }))).toThrow(/data/)
    expect(() => parseFrame(text({ type: 'response', id: 'a', status: 99, data: null }))).toThrow(/status/)
    expect(() => parseFrame(text({ type: 'response', id: 'a', status: 200.5, data: null }))).toThrow(/status/)
  })

  it('refuses a heartbeat whose status is not an object', () => {
    expect(() => parseFrame(text({ type: 'heartbeat', status: [] }))).toThrow(/status/)
    expect(() => parseFrame(text({ type: 'heartbeat' }))).toThrow(/status/)
  })

  it('tells the direction apart: a device never sends requests, the gateway never heartbeats', () => {
    expect(() => parseDeviceFrame(text(request))).toThrow(/device may not send request/)
    expect(() => parseGatewayFrame(text({ type: 'heartbeat', status: {} }))).toThrow(/gateway may not send heartbeat/)
    expect(parseDeviceFrame(text(register)).type).toBe('register')
    expect(parseGatewayFrame(text(request)).type).toBe('request')
  })

  it('takes the production-ack of contract §16 from the gateway, and a register frame with rated_cph 1–1,000,000', () => {
    const ack = { type: 'production-ack', ids: ['a-1'], rejected: [{ id: 'a-2', error: 'unknown kind' }] }
    expect(parseGatewayFrame(text(ack))).toEqual(ack)
    expect(() => parseGatewayFrame(text({ type: 'production-ack', ids: [1], rejected: [] }))).toThrow(/ids/)
    expect(parseDeviceFrame(text({ ...register, rated_cph: 4000 }))).toMatchObject({ rated_cph: 4000 })
    expect(() => parseDeviceFrame(text({ ...register, rated_cph: 0 }))).toThrow(/rated_cph/)
    expect(() => parseDeviceFrame(text({ ...register, rated_cph: 1_000_001 }))).toThrow(/rated_cph/)
  })

  it('shapes production frames and events as contract §16 says', () => {
    const frame = TypeCompiler.Compile(ProductionFrame)
    const event = TypeCompiler.Compile(ProductionEvent)
    expect(frame.Check({ type: 'production', events: [{ id: 'e1', kind: 'anything' }] })).toBe(true)
    expect(frame.Check({ type: 'production', events: [] })).toBe(false)
    expect(frame.Check({ type: 'production', events: Array.from({ length: 501 }, (_, i) => ({ id: `e${i}` })) })).toBe(false)
    expect(frame.Check({ type: 'production', events: [{ id: '' }] })).toBe(false)
    expect(frame.Check({ type: 'production', events: [{ id: 'x'.repeat(65) }] })).toBe(false)
    const valid = [
      { id: 'e1', ts: 1.5, kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted' },
      { id: 'e2', ts: 2, kind: 'job_started', job_id: 'j1', order_id: 'o1', program: 'board', boards_planned: 1 },
      { id: 'e3', ts: 3, kind: 'job_ended', job_id: 'j1', result: 'completed', boards_done: 1 },
      { id: 'e4', ts: 4, kind: 'placements', placed: 10, missed: 1, job_id: 'j1', feeders: [{ feeder: 'F1', placed: 10, missed: 1 }], nozzles: [{ nozzle: 'N1', placed: 10, missed: 1 }] },
      { id: 'e5', ts: 5, kind: 'fault', fault: 'pickup_error', feeder: 'F1', nozzle: 'N1', designator: 'R1', part: '10k' },
    ]
    for (const e of valid) expect(event.Check(e)).toBe(true)
    expect(event.Check({ id: 'e6', ts: 6, kind: 'state', state: 'offline' })).toBe(false)
    expect(event.Check({ id: 'e7', ts: 7, kind: 'job_ended', job_id: 'j1', result: 'done', boards_done: 1 })).toBe(false)
    expect(event.Check({ id: 'e8', ts: 8, kind: 'placements', placed: 1.5, missed: 0 })).toBe(false)
  })
})
