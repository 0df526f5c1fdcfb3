import { describe, expect, it } from 'vitest'
import { FrameError, parseDeviceFrame, parseFrame, parseGatewayFrame } from '@fleetgate/device-agent/protocol'

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
})
