import { QueryClient, QueryObserver } from '@tanstack/react-query'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { machineKeys, type MachineListFilter } from '../api/query-keys'
import type { DeviceEvent, DeviceList, DeviceRecord } from '../api/types'
import { machinesQuery } from '../features/gateway/machines/get-machines'
import { routeEvent } from './event-router'
import { LIST_REFETCH_INTERVAL_MS, machineListsLive } from './machine-events'

const record = (id: string, alive: boolean): DeviceRecord => ({
  device_id: id, labels: {}, rated_cph: null, hostname: id, ip: '10.0.0.1', version: '1', connect_time: 1, last_heartbeat: 1, last_status: {}, messages_sent: 0, messages_received: 0, alive, registered: alive, connected: alive,
})
const deviceEvent = (id: string, alive: boolean): DeviceEvent => ({ device_id: id, alive, registered: alive, version: '2', ip: '10.0.0.2', last_heartbeat: 5, at: 9, reason: alive ? 'registered' : 'closed' })
const send = (client: QueryClient, data: DeviceEvent) => routeEvent(client, { event: 'device', data: JSON.stringify(data) })
const fresh = () => new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: 5_000 } } })
const all: MachineListFilter = { prefix: '', after: null }
const page = (devices: DeviceRecord[], counts?: DeviceList['counts']): DeviceList => ({ success: true, devices, ...(counts ? { counts } : {}) })

/**
 * A fake server of `n` machines behind GET /api/v1/devices (pages of 100, counts), answering after
 * `latency` ms; it reads its state when the request arrives, as the real one does.
 */
function fakeServer(n: number, latency: number) {
  const alive = new Map(Array.from({ length: n }, (_, i) => [`m-${String(i).padStart(4, '0')}`, true]))
  const requests: { url: string; at: number; aborted: () => boolean }[] = []
  vi.stubGlobal('fetch', async (request: Request) => {
    const { url, signal } = request
    requests.push({ url, at: Date.now(), aborted: () => signal.aborted })
    const params = new URL(url, 'http://x').searchParams
    const ids = [...alive.keys()].filter((id) => id.startsWith(params.get('prefix') ?? '') && id > (params.get('after') ?? ''))
    const rows = ids.slice(0, Number(params.get('limit')))
    const body = page(
      rows.map((id) => record(id, alive.get(id)!)),
      { total: ids.length, online: ids.filter((id) => alive.get(id)).length },
    )
    if (ids.length > rows.length) body.next_after = rows[rows.length - 1]
    await new Promise((resolve, reject) => {
      setTimeout(resolve, latency)
      signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))
    })
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })
  })
  return { alive, requests, truth: (ids: string[]) => ids.map((id) => alive.get(id)) }
}

describe('machines lists under device events', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => {
    vi.useRealTimers()
    vi.unstubAllGlobals()
  })

  it('changes a listed machine in place on every cached page, and its online count, without asking the server', () => {
    const client = fresh()
    client.setQueryData(machineKeys.list(all), page([record('pnp-01', true), record('pnp-02', true)], { total: 3, online: 3 }))
    client.setQueryData(machineKeys.list({ prefix: 'pnp-02', after: null }), page([record('pnp-02', true)], { total: 1, online: 1 }))
    send(client, deviceEvent('pnp-02', false))
    const first = client.getQueryData<DeviceList>(machineKeys.list(all))!
    expect(first.devices.map((d) => [d.alive, d.version])).toEqual([[true, '1'], [false, '2']])
    expect(first.counts).toEqual({ total: 3, online: 2 })
    expect(client.getQueryData<DeviceList>(machineKeys.list({ prefix: 'pnp-02', after: null }))!.counts).toEqual({ total: 1, online: 0 })
    vi.advanceTimersByTime(10 * LIST_REFETCH_INTERVAL_MS)
    expect(client.getQueryState(machineKeys.list(all))!.isInvalidated).toBe(false)
    expect(machineListsLive(client).refetches).toBe(0)
  })

  it('refetches for a machine on no cached page at once, then at most once per interval however many follow', () => {
    const client = fresh()
    client.setQueryData(machineKeys.list(all), page([record('pnp-01', true)]))
    send(client, deviceEvent('pnp-09', true))
    vi.advanceTimersByTime(0)
    expect(client.getQueryState(machineKeys.list(all))!.isInvalidated).toBe(true)
    expect(machineListsLive(client).refetches).toBe(1)
    for (let i = 0; i < 1000; i++) {
      send(client, deviceEvent(`pnp-${1000 + i}`, i % 2 === 0))
      vi.advanceTimersByTime(1)
    }
    // 1 s of events: the next refetch waits for the interval, then comes once.
    expect(machineListsLive(client).refetches).toBe(1)
    vi.advanceTimersByTime(LIST_REFETCH_INTERVAL_MS)
    expect(machineListsLive(client).refetches).toBe(2)
    vi.advanceTimersByTime(10 * LIST_REFETCH_INTERVAL_MS)
    expect(machineListsLive(client).refetches).toBe(2)
  })

  it('leaves a search alone when the machine does not match it', () => {
    const client = fresh()
    client.setQueryData(machineKeys.list({ prefix: 'pnp-1', after: null }), page([record('pnp-10', true)]))
    send(client, deviceEvent('line-b-07', true))
    vi.advanceTimersByTime(LIST_REFETCH_INTERVAL_MS)
    expect(machineListsLive(client).refetches).toBe(0)
  })

  it('never cancels the fetch in flight, and lays the events it missed over its answer', async () => {
    const server = fakeServer(3, 500)
    const client = fresh()
    const observer = new QueryObserver(client, machinesQuery(all))
    const unsubscribe = observer.subscribe(() => {})
    await vi.advanceTimersByTimeAsync(0)
    expect(server.requests).toHaveLength(1)
    // While the page is on its way, m-0001 drops and a machine that no page holds registers.
    server.alive.set('m-0001', false)
    send(client, deviceEvent('m-0001', false))
    server.alive.set('m-0003', true)
    send(client, deviceEvent('m-0003', true))
    await vi.advanceTimersByTimeAsync(500)
    expect(server.requests[0]!.aborted()).toBe(false)
    // The answer (read before the change here) shows the event, not the old status.
    expect(observer.getCurrentResult().data!.devices.find((d) => d.device_id === 'm-0001')!.alive).toBe(false)
    // Then one refetch after it brings the new machine.
    await vi.advanceTimersByTimeAsync(LIST_REFETCH_INTERVAL_MS + 1000)
    expect(server.requests.map((r) => r.aborted())).toEqual([false, false])
    expect(observer.getCurrentResult().data!.devices.map((d) => [d.device_id, d.alive])).toEqual([
      ['m-0000', true], ['m-0001', false], ['m-0002', true], ['m-0003', true],
    ])
    expect(observer.getCurrentResult().data!.counts).toEqual({ total: 4, online: 3 })
    unsubscribe()
  })

  it('settles on the truth within 10 s, with at most 50 list requests, while 300 machines re-link at once', async () => {
    const server = fakeServer(300, 300)
    const client = fresh()
    const observer = new QueryObserver(client, machinesQuery(all))
    const unsubscribe = observer.subscribe(() => {})
    await vi.advanceTimersByTimeAsync(1000)
    const before = server.requests.length
    // A server restart: every link closes, then each machine re-links within ~4 s, in random order.
    const ids = [...server.alive.keys()]
    for (const id of ids) {
      server.alive.set(id, false)
      send(client, deviceEvent(id, false))
    }
    const order = ids.slice().sort(() => Math.random() - 0.5)
    for (const [i, id] of order.entries()) {
      if (i % 10 === 0) await vi.advanceTimersByTimeAsync(130)
      server.alive.set(id, true)
      send(client, deviceEvent(id, true))
    }
    const lastEvent = Date.now()
    await vi.advanceTimersByTimeAsync(10_000)
    const shown = observer.getCurrentResult().data!
    expect(shown.devices.map((d) => d.alive)).toEqual(server.truth(shown.devices.map((d) => d.device_id)))
    expect(shown.counts).toEqual({ total: 300, online: 300 })
    expect(server.requests.length - before).toBeLessThanOrEqual(50)
    expect(server.requests.every((r) => !r.aborted())).toBe(true)
    // It settled within an interval (plus a fetch in flight) of the last event, then stayed quiet.
    expect(server.requests.at(-1)!.at - lastEvent).toBeLessThanOrEqual(LIST_REFETCH_INTERVAL_MS + 300)
    unsubscribe()
  })
})
