import { describe, expect, it } from 'vitest'
import { ITEMS, testMachine } from './machine-helpers.js'

const PLACE_MS = 400

async function machineWithOrder() {
  const m = testMachine({ placeMsPerItem: PLACE_MS })
  const created = await m.call('POST', '/orders', { name: 'sensor board', items: ITEMS, settings: { speed: 'fast' } })
  return { ...m, orderId: created.data.order.id as string }
}

describe('simulated machine: tasks', () => {
  it('has no task before one ran', async () => {
    const { call } = testMachine()
    expect(await call('GET', '/tasks/current')).toEqual({ status: 200, data: { task: null } })
  })

  it('runs an order item by item to done', async () => {
    const { clock, call, orderId } = await machineWithOrder()
    const started = await call('POST', '/tasks/start', {})
    expect(started.data.task).toMatchObject({ order_id: orderId, state: 'running', placed: 0, total: 3 })
    expect(started.data.task.started_at).toBe(clock.now() / 1000)
    expect((await call('GET', `/orders/${orderId}`)).data.order.status).toBe('in_progress')

    clock.advance(PLACE_MS + 10)
    expect((await call('GET', '/tasks/current')).data.task).toMatchObject({ state: 'running', placed: 1 })
    clock.advance(2 * PLACE_MS)
    const done = (await call('GET', '/tasks/current')).data.task
    expect(done).toMatchObject({ state: 'done', placed: 3, total: 3 })
    expect(done.finished_at).toBe(done.started_at + (3 * PLACE_MS) / 1000)
    expect((await call('GET', `/orders/${orderId}`)).data.order.status).toBe('done')
    expect((await call('GET', '/orders/recent')).data.orders.map((o: { id: string }) => o.id)).toEqual([orderId])
  })

  it('moves the head to each item on the board while placing and takes parts from stock', async () => {
    const { clock, call } = await machineWithOrder()
    const stockBefore = (await call('GET', '/warehouse/components/cmp-r10k')).data.component.stock
    await call('POST', '/tasks/start', {})
    // The items' bounding box starts 5 mm inside the board corner (100, 80); the head reaches each item halfway through its slot.
    clock.advance(PLACE_MS / 2)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 105, y: 85, z: 10, r: 0 })
    clock.advance(PLACE_MS)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 115, y: 85, z: 10, r: 90 })
    clock.advance(PLACE_MS * 2)
    expect((await call('GET', '/hardware/position')).data).toEqual({ x: 125, y: 95, z: 10, r: 180 })
    expect((await call('GET', '/warehouse/components/cmp-r10k')).data.component.stock).toBe(stockBefore - 1)
  })

  it('pauses without progress and resumes where it left off', async () => {
    const { clock, call } = await machineWithOrder()
    await call('POST', '/tasks/start', {})
    clock.advance(PLACE_MS * 1.5)
    expect((await call('POST', '/tasks/pause')).data.task).toMatchObject({ state: 'paused', placed: 1 })
    clock.advance(60_000)
    expect((await call('GET', '/tasks/current')).data.task).toMatchObject({ state: 'paused', placed: 1 })
    expect((await call('GET', '/system/status')).data.state).toBe('paused')
    expect((await call('POST', '/tasks/resume')).data.task).toMatchObject({ state: 'running', placed: 1 })
    clock.advance(PLACE_MS * 0.5) // the half item done before the pause counts
    expect((await call('GET', '/tasks/current')).data.task).toMatchObject({ placed: 2 })
    clock.advance(PLACE_MS)
    expect((await call('GET', '/tasks/current')).data.task).toMatchObject({ state: 'done', placed: 3 })
  })

  it('stops a running task, keeping what was placed, and marks the order stopped', async () => {
    const { clock, call, orderId } = await machineWithOrder()
    await call('POST', '/tasks/start', { order_id: orderId })
    clock.advance(PLACE_MS)
    expect((await call('POST', '/tasks/stop')).data.task).toMatchObject({ state: 'stopped', placed: 1 })
    clock.advance(PLACE_MS * 10)
    expect((await call('GET', '/tasks/current')).data.task).toMatchObject({ state: 'stopped', placed: 1 })
    expect((await call('GET', `/orders/${orderId}`)).data.order.status).toBe('stopped')
  })

  it('answers 409 to transitions the state machine does not allow', async () => {
    const { clock, call } = await machineWithOrder()
    expect((await call('POST', '/tasks/pause')).status).toBe(409)
    expect((await call('POST', '/tasks/resume')).status).toBe(409)
    expect((await call('POST', '/tasks/stop')).status).toBe(409)
    await call('POST', '/tasks/start', {})
    expect((await call('POST', '/tasks/start', {})).data).toMatchObject({ error: 'task_active' })
    expect((await call('POST', '/tasks/resume')).data).toMatchObject({ error: 'invalid_transition' })
    expect((await call('POST', '/hardware/move', { x: 1 })).status).toBe(409)
    clock.advance(PLACE_MS * 3)
    expect((await call('POST', '/tasks/pause')).status).toBe(409) // done
    expect((await call('POST', '/tasks/start', {})).data).toMatchObject({ error: 'no_pending_order' })
  })

  it('starts a named order, 404 for an unknown one, 409 for an empty or closed one', async () => {
    const { call, orderId } = await machineWithOrder()
    expect((await call('POST', '/tasks/start', { order_id: 'ord-9999' })).status).toBe(404)
    const empty = await call('POST', '/orders', { name: 'empty', items: [], settings: {} })
    expect((await call('POST', '/tasks/start', { order_id: empty.data.order.id })).data).toMatchObject({ error: 'empty_order' })
    await call('POST', `/orders/${orderId}/cancel`)
    expect((await call('POST', '/tasks/start', { order_id: orderId })).data).toMatchObject({ error: 'order_not_pending' })
  })

  it('cancelling the order being placed stops its task; deleting it is refused', async () => {
    const { call, orderId } = await machineWithOrder()
    await call('POST', '/tasks/start', {})
    expect((await call('DELETE', `/orders/${orderId}`)).data).toMatchObject({ error: 'order_in_use' })
    expect((await call('POST', `/orders/${orderId}/cancel`)).data).toMatchObject({ cancelled: true, order: { status: 'cancelled' } })
    expect((await call('GET', '/tasks/current')).data.task.state).toBe('stopped')
    expect((await call('DELETE', `/orders/${orderId}`)).data).toEqual({ deleted: true, id: orderId })
    expect((await call('GET', `/orders/${orderId}`)).status).toBe(404)
  })

  it('calibrates for a few seconds, refusing motion and tasks meanwhile', async () => {
    const { clock, call } = await machineWithOrder()
    const cal = await call('POST', '/system/cal')
    expect(cal.data).toMatchObject({ started: true, eta_ms: 3000, calibration: { state: 'running' } })
    expect((await call('POST', '/system/cal')).status).toBe(409)
    expect((await call('POST', '/hardware/move', { x: 1 })).data).toMatchObject({ error: 'calibrating' })
    expect((await call('POST', '/tasks/start', {})).data).toMatchObject({ error: 'calibrating' })
    clock.advance(1500)
    expect((await call('GET', '/system/status')).data).toMatchObject({ state: 'calibrating', calibration: { state: 'running', progress: 0.5 } })
    clock.advance(1500)
    expect((await call('GET', '/system/status')).data.calibration).toMatchObject({ state: 'done', progress: 1 })
    expect((await call('GET', '/hardware/sync')).data.homed).toBe(true)
    expect((await call('POST', '/tasks/start', {})).status).toBe(200)
  })
})
