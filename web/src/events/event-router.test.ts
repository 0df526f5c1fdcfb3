import { QueryClient, QueryObserver } from '@tanstack/react-query'
import { describe, expect, it } from 'vitest'
import { machineKeys, platformKeys } from '../api/query-keys'
import type { DeviceList, DeviceRecord } from '../api/types'
import { routeEvent } from './event-router'

const device = (id: string, alive: boolean): DeviceRecord => ({
  device_id: id,
  labels: {},
  rated_cph: null,
  hostname: id,
  ip: '10.0.0.1',
  version: '1',
  connect_time: 1,
  last_heartbeat: 1,
  last_status: {},
  alive,
  registered: alive,
  connected: alive,
  messages_sent: 0,
  messages_received: 0,
})
const event = (name: string, data: unknown) => ({ event: name, data: JSON.stringify(data) })
const fresh = () => new QueryClient({ defaultOptions: { queries: { retry: false } } })

describe('event router', () => {
  it('updates the machine row in every cached page when a device event arrives', () => {
    const client = fresh()
    client.setQueryData<DeviceList>(machineKeys.list({ prefix: '', after: null }), { success: true, devices: [device('pnp-01', true), device('pnp-02', true)] })
    client.setQueryData<DeviceList>(machineKeys.list({ prefix: '', after: 'pnp-02' }), { success: true, devices: [device('pnp-03', true)] })
    routeEvent(client, event('device', { device_id: 'pnp-02', alive: false, registered: false, version: '2', ip: 'x', last_heartbeat: 5, at: 9 }))
    const page = client.getQueryData<DeviceList>(machineKeys.list({ prefix: '', after: null }))!
    expect(page.devices.map((d) => d.alive)).toEqual([true, false])
    expect(page.devices[1]!.version).toBe('2')
    expect(client.getQueryState(machineKeys.list({ prefix: '', after: null }))!.isInvalidated).toBe(false)
    expect(client.getQueryData<DeviceList>(machineKeys.list({ prefix: '', after: 'pnp-02' }))!.devices[0]!.alive).toBe(true)
  })

  it('refetches the lists for a machine not listed yet (its first registration)', async () => {
    const client = fresh()
    client.setQueryData<DeviceList>(machineKeys.list({ prefix: '', after: null }), { success: true, devices: [device('pnp-01', true)] })
    routeEvent(client, event('device', { device_id: 'pnp-09', alive: true, registered: true, version: '1', ip: 'x', last_heartbeat: 5, at: 9 }))
    await expect.poll(() => client.getQueryState(machineKeys.list({ prefix: '', after: null }))!.isInvalidated).toBe(true)
  })

  it('moves a command row to its new status in place', () => {
    const client = fresh()
    client.setQueryData(platformKeys.commands('iot-1'), { commands: [{ id: 7, action: 'bleep', status: 'pending', attempts: 0 }] })
    routeEvent(client, event('command', { device_id: 'iot-1', id: 7, action: 'bleep', status: 'delivered', attempts: 1, at: 1 }))
    expect(client.getQueryData<{ commands: { status: string; attempts: number }[] }>(platformKeys.commands('iot-1'))!.commands[0]).toMatchObject({
      status: 'delivered',
      attempts: 1,
    })
  })

  it('does not let a fetch that started before a command event put the old status back', async () => {
    const client = fresh()
    const key = platformKeys.commands('iot-1')
    const server = { status: 'pending', attempts: 0 }
    let calls = 0
    let answerLate!: () => void
    const queryFn = () => {
      const snapshot = { commands: [{ id: 7, action: 'bleep', ...server }] }
      calls += 1
      // The second read happens while the command is pending and answers late.
      if (calls === 2) return new Promise<typeof snapshot>((resolve) => (answerLate = () => resolve(snapshot)))
      return Promise.resolve(snapshot)
    }
    const observer = new QueryObserver(client, { queryKey: key, queryFn })
    const unsubscribe = observer.subscribe(() => {})
    await expect.poll(() => client.getQueryData(key)).toBeDefined()
    void client.refetchQueries({ queryKey: key })
    await expect.poll(() => calls).toBe(2)
    // Meanwhile the device acks it: the server moves on and says so.
    Object.assign(server, { status: 'done', attempts: 1 })
    routeEvent(client, event('command', { device_id: 'iot-1', id: 7, action: 'bleep', status: 'done', attempts: 1, at: 1 }))
    answerLate()
    await expect.poll(() => client.isFetching({ queryKey: key })).toBe(0)
    expect(client.getQueryData<{ commands: { status: string }[] }>(key)!.commands[0]!.status).toBe('done')
    unsubscribe()
  })

  it('ignores an event whose data is not JSON', () => {
    const client = fresh()
    expect(() => routeEvent(client, { event: 'device', data: 'nope' })).not.toThrow()
  })
})
