import { QueryClient, type InfiniteData } from '@tanstack/react-query'
import { describe, expect, it } from 'vitest'
import { rolloutKeys } from '../api/query-keys'
import type { Rollout, RolloutCounts, RolloutDetail, RolloutDevice, RolloutList } from '../api/types'
import { routeEvent } from './event-router'
import { applyRolloutDeviceEvent, MISSING_MACHINE_REFETCH_MS, putRollout } from './rollout-events'

const counts = (over: Partial<RolloutCounts> = {}): RolloutCounts => ({
  pending: 0, waiting: 0, offered: 0, downloading: 0, installing: 0, installed: 0, failed: 0, ...over,
})
const rollout = (id: string, over: Partial<Rollout> = {}): Rollout => ({
  rollout_id: id, release_id: 'rel-7', display_version: '1.4.2-7', state: 'running', stage: 0, stages: [50, 100],
  max_failure_ratio: 0.1, soak_seconds: 0, created_at: 1_700_000_000, created_by: 'root', selector: null, kpi_gate: null, gate: null, pause_reason: null, counts: counts({ pending: 2, waiting: 2 }), targeted: 4, ...over,
})
const machine = (id: string, stage = 0, state: RolloutDevice['state'] = 'waiting'): RolloutDevice => ({
  device_id: id, stage, state, progress: null, error: null, updated_at: 1_700_000_000,
})
const infinite = <T,>(...pages: T[]): InfiniteData<T> => ({ pages, pageParams: pages.map((_, i) => (i === 0 ? null : `p${i}`)) })
const event = (name: string, data: unknown) => ({ event: name, data: JSON.stringify(data) })
const fresh = () => new QueryClient({ defaultOptions: { queries: { retry: false } } })

const listOf = (client: QueryClient) => client.getQueryData<InfiniteData<RolloutList>>(rolloutKeys.lists())!
const detailOf = (client: QueryClient, id: string) => client.getQueryData<InfiniteData<RolloutDetail>>(rolloutKeys.detail(id))!
const invalidated = (client: QueryClient, key: readonly unknown[]) => client.getQueryState(key)?.isInvalidated

describe('rollout events in the query cache', () => {
  it('a rollout event moves the listed rollout’s state, stage and counts in place, on whatever page it is', () => {
    const client = fresh()
    client.setQueryData(rolloutKeys.lists(), infinite<RolloutList>({ success: true, rollouts: [rollout('ro-2')], next_before: 'ro-2' }, { success: true, rollouts: [rollout('ro-1', { state: 'completed' })] }))
    routeEvent(client, event('rollout', { rollout_id: 'ro-2', release_id: 'rel-7', state: 'paused', stage: 1, counts: counts({ installed: 3, failed: 1 }), at: 5 }))
    const [first, second] = listOf(client).pages
    expect(first!.rollouts[0]).toMatchObject({ state: 'paused', stage: 1, counts: { installed: 3, failed: 1 }, targeted: 4, display_version: '1.4.2-7' })
    expect(second!.rollouts[0]!.state).toBe('completed')
    expect(invalidated(client, rolloutKeys.lists())).toBe(false)
  })

  it('a rollout not listed yet (just created) makes the list refetch', () => {
    const client = fresh()
    client.setQueryData(rolloutKeys.lists(), infinite<RolloutList>({ success: true, rollouts: [rollout('ro-1', { state: 'completed' })] }))
    routeEvent(client, event('rollout', { rollout_id: 'ro-2', release_id: 'rel-7', state: 'running', stage: 0, counts: counts({ pending: 4 }), at: 5 }))
    expect(invalidated(client, rolloutKeys.lists())).toBe(true)
  })

  it('an ended rollout on a page not loaded (an aborted one whose machines still report) leaves the list alone', () => {
    const client = fresh()
    client.setQueryData(rolloutKeys.lists(), infinite<RolloutList>({ success: true, rollouts: [rollout('ro-9', { state: 'completed' })], next_before: 'ro-9' }))
    for (let i = 0; i < 5; i++) {
      routeEvent(client, event('rollout', { rollout_id: 'ro-1', release_id: 'rel-7', state: 'aborted', stage: 0, counts: counts({ installed: i }), at: 5 + i }))
    }
    expect(invalidated(client, rolloutKeys.lists())).toBe(false)
  })

  it('a rollout event updates the open rollout page in every loaded page, keeping its machines', () => {
    const client = fresh()
    client.setQueryData(
      rolloutKeys.detail('ro-2'),
      infinite<RolloutDetail>({ success: true, rollout: rollout('ro-2'), devices: [machine('pnp-01')], next_after: 'pnp-01' }, { success: true, rollout: rollout('ro-2'), devices: [machine('pnp-02')] }),
    )
    routeEvent(client, event('rollout', { rollout_id: 'ro-2', release_id: 'rel-7', state: 'completed', stage: 1, counts: counts({ installed: 4 }), at: 9 }))
    for (const page of detailOf(client, 'ro-2').pages) expect(page.rollout).toMatchObject({ state: 'completed', stage: 1, counts: { installed: 4 }, targeted: 4 })
    expect(detailOf(client, 'ro-2').pages.map((p) => p.devices[0]!.device_id)).toEqual(['pnp-01', 'pnp-02'])
    expect(invalidated(client, rolloutKeys.detail('ro-2'))).toBe(false)
  })

  it('a rollout-device event changes that machine’s row in place, on the page that holds it', () => {
    const client = fresh()
    client.setQueryData(
      rolloutKeys.detail('ro-2'),
      infinite<RolloutDetail>({ success: true, rollout: rollout('ro-2'), devices: [machine('pnp-01'), machine('pnp-02')], next_after: 'pnp-02' }, { success: true, rollout: rollout('ro-2'), devices: [machine('pnp-03', 1, 'pending')] }),
    )
    routeEvent(client, event('rollout-device', { rollout_id: 'ro-2', device_id: 'pnp-03', stage: 1, state: 'downloading', progress: 40, error: null, at: 1_700_000_050 }))
    routeEvent(client, event('rollout-device', { rollout_id: 'ro-2', device_id: 'pnp-02', stage: 0, state: 'failed', progress: null, error: 'sha256 mismatch', at: 1_700_000_060 }))
    const [first, second] = detailOf(client, 'ro-2').pages
    expect(second!.devices[0]).toEqual({ device_id: 'pnp-03', stage: 1, state: 'downloading', progress: 40, error: null, updated_at: 1_700_000_050 })
    expect(first!.devices[1]).toEqual({ device_id: 'pnp-02', stage: 0, state: 'failed', progress: null, error: 'sha256 mismatch', updated_at: 1_700_000_060 })
    expect(first!.devices[0]).toEqual(machine('pnp-01'))
    expect(invalidated(client, rolloutKeys.detail('ro-2'))).toBe(false)
  })

  it('ignores a rollout-device event for a machine on a page not loaded yet, however many arrive', () => {
    const client = fresh()
    client.setQueryData(rolloutKeys.detail('ro-2'), infinite<RolloutDetail>({ success: true, rollout: rollout('ro-2'), devices: [machine('pnp-01')], next_after: 'pnp-01' }))
    const before = detailOf(client, 'ro-2')
    for (let i = 0; i < 50; i++) {
      routeEvent(client, event('rollout-device', { rollout_id: 'ro-2', device_id: `pnp-${100 + i}`, stage: 1, state: 'downloading', progress: i, error: null, at: 5 }))
    }
    expect(detailOf(client, 'ro-2')).toBe(before)
    expect(invalidated(client, rolloutKeys.detail('ro-2'))).toBe(false)
  })

  it('refetches a complete machine list that lacks the machine at most once per interval', () => {
    const client = fresh()
    const key = rolloutKeys.detail('ro-2')
    const seed = () => client.setQueryData(key, infinite<RolloutDetail>({ success: true, rollout: rollout('ro-2'), devices: [machine('pnp-01')] }))
    const missing = (now: number) =>
      applyRolloutDeviceEvent(client, { rollout_id: 'ro-2', device_id: 'pnp-09', stage: 0, state: 'waiting', progress: null, error: null, at: 5 }, now)
    seed()
    missing(1_000)
    expect(invalidated(client, key)).toBe(true)
    seed() // the refetch answered
    missing(1_000 + MISSING_MACHINE_REFETCH_MS - 1)
    expect(invalidated(client, key)).toBe(false)
    missing(1_000 + MISSING_MACHINE_REFETCH_MS)
    expect(invalidated(client, key)).toBe(true)
  })

  it('does nothing for a rollout-device event when that rollout’s page is not open', () => {
    const client = fresh()
    routeEvent(client, event('rollout-device', { rollout_id: 'ro-9', device_id: 'pnp-01', stage: 0, state: 'installed', progress: null, error: null, at: 5 }))
    expect(client.getQueryCache().getAll()).toEqual([])
  })

  it('an action’s answer replaces the cached rollout, and a new one makes the list refetch', () => {
    const client = fresh()
    client.setQueryData(rolloutKeys.lists(), infinite<RolloutList>({ success: true, rollouts: [rollout('ro-2')] }))
    client.setQueryData(rolloutKeys.detail('ro-2'), infinite<RolloutDetail>({ success: true, rollout: rollout('ro-2'), devices: [machine('pnp-01')] }))
    putRollout(client, rollout('ro-2', { state: 'paused' }))
    expect(listOf(client).pages[0]!.rollouts[0]!.state).toBe('paused')
    expect(detailOf(client, 'ro-2').pages[0]!.rollout.state).toBe('paused')
    expect(invalidated(client, rolloutKeys.lists())).toBe(false)
    putRollout(client, rollout('ro-3'))
    expect(invalidated(client, rolloutKeys.lists())).toBe(true)
  })
})
