import { QueryClient } from '@tanstack/react-query'
import { describe, expect, it } from 'vitest'
import { platformKeys } from '../../api/query-keys'
import { routeEvent } from '../../events/event-router'
import type { CommandList, DeviceDetail } from './platform-types'

const command = (id: number, status: CommandList['commands'][number]['status'], attempts = 0) => ({
  id, device_id: 'iot-1', action: 'ping', params: {}, status, attempts, created_at: 1, delivered_at: null, acked_at: null, result: null, error: null,
})
const event = (name: string, data: unknown) => ({ event: name, data: JSON.stringify(data), id: '1' })

describe('§11 events in the platform pages’ cache', () => {
  it('a command event changes that row’s Status and Attempts in place, leaving the others', () => {
    const client = new QueryClient()
    client.setQueryData<CommandList>(platformKeys.commands('iot-1'), { success: true, commands: [command(2, 'pending'), command(1, 'done', 1)] })
    routeEvent(client, event('command', { device_id: 'iot-1', id: 2, action: 'ping', status: 'delivered', attempts: 1, at: 5 }))
    const rows = () => client.getQueryData<CommandList>(platformKeys.commands('iot-1'))!.commands
    expect(rows().map((c) => [c.id, c.status, c.attempts])).toEqual([
      [2, 'delivered', 1],
      [1, 'done', 1],
    ])
    expect(client.getQueryState(platformKeys.commands('iot-1'))?.isInvalidated).toBe(false)
    routeEvent(client, event('command', { device_id: 'iot-1', id: 2, action: 'ping', status: 'done', attempts: 1, at: 6 }))
    expect(rows().map((c) => [c.id, c.status, c.attempts])).toEqual([
      [2, 'done', 1],
      [1, 'done', 1],
    ])
  })

  it('a finished command makes the list refetch, for the result or error the event does not carry', () => {
    const client = new QueryClient()
    client.setQueryData<CommandList>(platformKeys.commands('iot-1'), { success: true, commands: [command(2, 'delivered', 1)] })
    routeEvent(client, event('command', { device_id: 'iot-1', id: 2, action: 'ping', status: 'failed', attempts: 1, at: 6 }))
    expect(client.getQueryState(platformKeys.commands('iot-1'))?.isInvalidated).toBe(true)
  })

  it('a command not yet listed makes the list refetch', () => {
    const client = new QueryClient()
    client.setQueryData<CommandList>(platformKeys.commands('iot-1'), { success: true, commands: [] })
    routeEvent(client, event('command', { device_id: 'iot-1', id: 9, action: 'ping', status: 'pending', attempts: 0, at: 5 }))
    expect(client.getQueryState(platformKeys.commands('iot-1'))?.isInvalidated).toBe(true)
  })

  it('a platform-device event refreshes the devices pages, the summary and that device’s page', () => {
    const client = new QueryClient()
    const detail = { success: true, device: { device_id: 'iot-1', online: false }, latest_telemetry: {} } as unknown as DeviceDetail
    client.setQueryData(platformKeys.detail('iot-1'), detail)
    client.setQueryData(platformKeys.detail('iot-2'), detail)
    client.setQueryData(platformKeys.devicePage(null), { success: true, devices: [] })
    client.setQueryData(platformKeys.summary(), {})
    routeEvent(client, event('platform-device', { device_id: 'iot-1', online: true, last_online_at: 5, at: 5 }))
    expect(client.getQueryState(platformKeys.detail('iot-1'))?.isInvalidated).toBe(true)
    expect(client.getQueryState(platformKeys.devicePage(null))?.isInvalidated).toBe(true)
    expect(client.getQueryState(platformKeys.summary())?.isInvalidated).toBe(true)
    expect(client.getQueryState(platformKeys.detail('iot-2'))?.isInvalidated).toBe(false)
  })
})
