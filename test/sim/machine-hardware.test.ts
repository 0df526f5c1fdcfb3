import { describe, expect, it } from 'vitest'
import { testMachine } from './machine-helpers.js'

describe('simulated machine: hardware', () => {
  it('moves over time in proportion to distance and speed', async () => {
    const { clock, call } = testMachine()
    const move = await call('POST', '/hardware/move', { x: 100, y: 0, speed: 100 })
    expect(move).toEqual({ status: 200, data: { accepted: true, target: { x: 100, y: 0, z: 0, r: 0 }, eta_ms: 1000 } })
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 0, y: 0, z: 0, r: 0 })
    clock.advance(250)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 25, y: 0, z: 0, r: 0 })
    clock.advance(500)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 75, y: 0, z: 0, r: 0 })
    clock.advance(5000)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 100, y: 0, z: 0, r: 0 })
  })

  it('interpolates diagonal moves on all axes together and uses the default speed from the settings', async () => {
    const { clock, call } = testMachine()
    await call('PUT', '/system/settings', { key: 'speed_mm_s', value: 50 })
    const move = await call('POST', '/hardware/move', { x: 30, y: 40, r: 90 })
    expect(move.data.eta_ms).toBe(1000) // 50 mm at 50 mm/s
    clock.advance(500)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 15, y: 20, z: 0, r: 45 })
  })

  it('moves relative to where the head is, even mid-move', async () => {
    const { clock, call } = testMachine()
    await call('POST', '/hardware/move', { x: 100, speed: 100 })
    clock.advance(500)
    const move = await call('POST', '/hardware/move', { y: 10, relative: true, speed: 100 })
    expect(move.data.target).toEqual({ x: 50, y: 10, z: 0, r: 0 })
  })

  it('refuses targets outside the soft limits with 400 and a reason, without moving', async () => {
    const { call } = testMachine()
    const res = await call('POST', '/hardware/move', { x: 450 })
    expect(res.status).toBe(400)
    expect(res.data).toMatchObject({ error: 'out_of_range' })
    expect(res.data.message).toMatch(/x 450 mm is outside the soft limits 0–400 mm/)
    expect((await call('POST', '/hardware/move', { z: -1 })).status).toBe(400)
    expect((await call('POST', '/hardware/move', { y: -5, relative: true })).status).toBe(400)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 0, y: 0, z: 0, r: 0 })
  })

  it('refuses a move without any axis, a bad speed or wrongly typed fields with 400', async () => {
    const { call } = testMachine()
    expect((await call('POST', '/hardware/move', { speed: 10 })).status).toBe(400)
    expect((await call('POST', '/hardware/move', { x: 10, speed: 0 })).status).toBe(400)
    expect((await call('POST', '/hardware/move', { x: '10' })).status).toBe(400)
    expect((await call('POST', '/hardware/move', null)).status).toBe(400)
  })

  it('switches pump, valve and light, validating brightness 0–255', async () => {
    const { call } = testMachine()
    expect((await call('POST', '/hardware/pump', { state: true })).data).toEqual({ pump: true, vacuum_kpa: -62 })
    expect((await call('POST', '/hardware/valve', { state: false })).data).toEqual({ valve: false })
    expect((await call('POST', '/hardware/light', { state: true, brightness: 200 })).data).toEqual({ light: { state: true, brightness: 200 } })
    expect((await call('POST', '/hardware/light', { state: true, brightness: 256 })).status).toBe(400)
    expect((await call('POST', '/hardware/pump', {})).status).toBe(400)
  })

  it('reports pump, valve and light in its heartbeat status as last set (contract §10)', async () => {
    const { machine, call } = testMachine()
    expect(machine.status()).toMatchObject({ pump: false, valve: false, light: false })
    await call('POST', '/hardware/pump', { state: true })
    await call('POST', '/hardware/valve', { state: true })
    await call('POST', '/hardware/light', { state: true, brightness: 90 })
    expect(machine.status()).toMatchObject({ pump: true, valve: true, light: true })
    await call('POST', '/hardware/light', { state: false })
    expect(machine.status()).toMatchObject({ pump: true, valve: true, light: false })
  })

  it('picks a part: moves down to it, switches the pump on and remembers what it holds', async () => {
    const { clock, machine, call } = testMachine()
    const res = await call('POST', '/hardware/pick', { component_id: 'cmp-r10k', x: 30, y: 40, angle: 90 })
    expect(res.data).toMatchObject({ picked: true, component_id: 'cmp-r10k', target: { x: 30, y: 40, z: 2, r: 90 } })
    clock.advance(res.data.eta_ms)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 30, y: 40, z: 2, r: 90 })
    expect(machine.hardware).toMatchObject({ pump: true, holding: { component_id: 'cmp-r10k' } })
    const detect = await call('POST', '/vision/detect/down')
    expect(detect.data.detections).toHaveLength(1)
    expect(detect.data.detections[0]).toMatchObject({ label: 'cmp-r10k', angle: 90 })
  })

  it('reports axis synchronisation while moving and once settled', async () => {
    const { clock, call } = testMachine()
    await call('POST', '/hardware/move', { x: 10, speed: 10 })
    expect((await call('GET', '/hardware/sync')).data).toMatchObject({ synced: false, moving: true, axes: { x: { target: 10, in_sync: false } } })
    clock.advance(1000)
    expect((await call('GET', '/hardware/sync')).data).toMatchObject({ synced: true, moving: false, axes: { x: { position: 10, in_sync: true } } })
  })
})
