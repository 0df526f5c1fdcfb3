import { act, fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { routeEvent } from '../../../events/event-router'
import { renderRoute } from '../../../testing/render-route'
import { stubFetch } from '../../../testing/stub-fetch'
import { MachineProductionRegion } from './machine-production'
import type { Job, MachineProduction } from './production-types'
import { figures, seconds } from './production-test-data'

afterEach(() => vi.unstubAllGlobals())

const production = (over: Partial<MachineProduction> = {}): MachineProduction => ({
  success: true, device_id: 'pnp-01', from: 1, to: 2, rated_cph: 4000, state: null, ...figures(), faults: { pickup_error: 3 }, jobs_completed: 1,
  feeders: [
    { feeder: 'F7', placed: 900, missed: 45, miss_rate: 45 / 945 },
    { feeder: 'F1', placed: 2000, missed: 4, miss_rate: 4 / 2004 },
    { feeder: 'F2', placed: 1100, missed: 0, miss_rate: 0 },
  ],
  nozzles: [],
  ...over,
})
const job = (id: string, over: Partial<Job> = {}): Job => ({
  job_id: id, order_id: 'o-1', program: 'p', started_at: 1_764_374_400, ended_at: 1_764_378_000, result: 'completed', boards_planned: 20, boards_done: 20, placed: 4000, missed: 12, ...over,
})
const hour = 1_764_374_400

function serve(feeders?: MachineProduction['feeders'], state: MachineProduction['state'] = null) {
  return stubFetch((request) => {
    if (request.url.includes('/production/series')) {
      const bucket = (start: number, over: object) => ({ start, ...figures(), ...over })
      return {
        status: 200,
        body: { success: true, bucket: 'hour', buckets: [bucket(hour, { seconds: seconds({ productive: 3000, standby: 600 }), placed: 3300, missed: 10 }), bucket(hour + 3600, { seconds: seconds({ unscheduled_down: 3600 }), placed: 0, missed: 0 })] },
      }
    }
    if (request.url.includes('/production/jobs')) {
      if (request.url.includes('after=')) return { status: 200, body: { success: true, jobs: [job('j-1')], next_after: null } }
      return { status: 200, body: { success: true, jobs: [job('j-3', { ended_at: null, result: null, boards_done: null }), job('j-2', { result: 'failed', boards_done: 7, missed: 40 })], next_after: 'j-2' } }
    }
    if (request.url.includes('/production')) return { status: 200, body: production({ state, ...(feeders ? { feeders } : {}) }) }
    return { status: 404, body: { success: false, error: 'not_found', message: request.url } }
  })
}
const show = (alive = true) => renderRoute('/machines/:id', <MachineProductionRegion id="pnp-01" alive={alive} />, '/machines/pnp-01')
const rowsOf = (table: HTMLElement) => within(table).getAllByRole('row').slice(1).map((r) => within(r).getAllByRole('cell').map((c) => c.textContent))

describe('machine region "Production"', () => {
  it('lists the feeders in the server’s order, the worst first and marked in words', async () => {
    serve()
    show()
    const region = screen.getByRole('region', { name: 'Production' })
    const table = await within(region).findByRole('table', { name: 'Feeders' })
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Feeder', 'Placed', 'Missed', 'Miss rate'])
    expect(rowsOf(table)).toEqual([
      ['F7 ▲ Worst', '900', '45', '4.76%'],
      ['F1', '2,000', '4', '0.2%'],
      ['F2', '1,100', '0', '0%'],
    ])
    const rows = within(table).getAllByRole('row').slice(1)
    expect(rows.map((r) => r.className)).toEqual(['worst-row', '', ''])
  })

  it('marks no feeder when none missed', async () => {
    serve([{ feeder: 'F1', placed: 10, missed: 0, miss_rate: 0 }])
    show()
    const table = await screen.findByRole('table', { name: 'Feeders' })
    expect(rowsOf(table)).toEqual([['F1', '10', '0', '0%']])
  })

  it('lists the jobs newest first, a running one without end or result, and loads older ones', async () => {
    serve()
    show()
    const table = await screen.findByRole('table', { name: 'Jobs' })
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Job', 'Started', 'Ended', 'Result', 'Boards', 'Placed', 'Missed'])
    const rows = rowsOf(table)
    expect(rows.map((r) => [r[0], r[2] === 'Running', r[3], r[4], r[6]])).toEqual([
      ['j-3', true, 'Running', '0 of 20', '12'],
      ['j-2', false, 'Failed', '7 of 20', '40'],
    ])
    expect(rows[1]![1]).toBe(new Intl.DateTimeFormat(navigator.languages, { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).format(hour * 1000))
    fireEvent.click(within(screen.getByRole('region', { name: 'Production' })).getByRole('button', { name: 'Load more' }))
    await waitFor(() => expect(rowsOf(screen.getByRole('table', { name: 'Jobs' })).map((r) => r[0])).toEqual(['j-3', 'j-2', 'j-1']))
  })

  it('draws charts "State timeline" and "Placements per hour" with their legends in words', async () => {
    serve()
    show()
    const timeline = await screen.findByRole('img', { name: 'State timeline' })
    const legend = document.getElementById(timeline.getAttribute('aria-describedby')!)!
    expect(within(legend).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['Productive: 50:00', 'Standby: 10:00', 'Unscheduled down: 1:00:00'])
    const placements = screen.getByRole('img', { name: 'Placements per hour' })
    expect(document.getElementById(placements.getAttribute('aria-describedby')!)!.textContent).toContain('Placed: 3,300')
  })

  it('shows the current state live from `machine-state` events', async () => {
    serve()
    const { client } = show()
    const region = screen.getByRole('region', { name: 'Production' })
    expect(within(region).getByText(/Current state:/).textContent).toContain('Unknown')
    act(() => routeEvent(client, { event: 'machine-state', data: JSON.stringify({ device_id: 'pnp-01', state: 'productive', reason: null, at: hour }) }))
    await waitFor(() => expect(within(region).getByText(/Current state:/).textContent).toContain('Productive'))
    act(() => routeEvent(client, { event: 'machine-state', data: JSON.stringify({ device_id: 'pnp-01', state: 'unscheduled_down', reason: 'parts_exhausted', at: hour + 60 }) }))
    await waitFor(() => expect(within(region).getByText(/Current state:/).textContent).toContain('Unscheduled down · reason: parts exhausted'))
    // Another machine's event, and an older one of this machine, change nothing.
    act(() => routeEvent(client, { event: 'machine-state', data: JSON.stringify({ device_id: 'pnp-02', state: 'standby', reason: null, at: hour + 120 }) }))
    act(() => routeEvent(client, { event: 'machine-state', data: JSON.stringify({ device_id: 'pnp-01', state: 'standby', reason: null, at: hour + 30 }) }))
    expect(within(region).getByText(/Current state:/).textContent).toContain('Unscheduled down')
  })

  it('shows the state the server keeps at once, then live events over it', async () => {
    serve(undefined, { state: 'standby', reason: 'setup', since: hour + 60 })
    const { client } = show()
    const region = screen.getByRole('region', { name: 'Production' })
    const current = () => within(region).getByText(/Current state:/).textContent
    await waitFor(() => expect(current()).toContain('Standby · reason: setup'))
    // An event older than the fetched state (it came before) changes nothing; a newer one wins.
    act(() => routeEvent(client, { event: 'machine-state', data: JSON.stringify({ device_id: 'pnp-01', state: 'productive', reason: null, at: hour }) }))
    expect(current()).toContain('Standby')
    act(() => routeEvent(client, { event: 'machine-state', data: JSON.stringify({ device_id: 'pnp-01', state: 'productive', reason: null, at: hour + 120 }) }))
    await waitFor(() => expect(current()).toContain('Productive'))
    expect(current()).not.toContain('reason')
    // A refetch that read the server before the event does not put the older state back.
    await act(() => client.refetchQueries())
    expect(current()).toContain('Productive')
  })

  it('says a machine not linked is offline until it reports', () => {
    serve()
    show(false)
    expect(within(screen.getByRole('region', { name: 'Production' })).getByText(/Current state:/).textContent).toContain('Offline')
  })
})
