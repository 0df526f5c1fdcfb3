import { act, fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Rollout, RolloutDevice } from '../../../../api/types'
import { routeEvent } from '../../../../events/event-router'
import { renderRoute } from '../../../../testing/render-route'
import { stubFetch, type RecordedRequest } from '../../../../testing/stub-fetch'
import { RolloutPage } from './rollout-page'

const rollout = (over: Partial<Rollout> = {}): Rollout => ({
  rollout_id: 'ro-1', release_id: 'rel-22', display_version: '1.4.2-22', state: 'running', stage: 0, stages: [50, 100], max_failure_ratio: 0.1,
  soak_seconds: 0, created_at: 1_700_000_100, created_by: 'root', selector: null, kpi_gate: null, gate: null, pause_reason: null, targeted: 3,
  counts: { pending: 1, waiting: 0, offered: 0, downloading: 1, installing: 0, installed: 1, failed: 0 },
  ...over,
})
const machine = (id: string, stage: number, state: RolloutDevice['state'], progress: number | null = null): RolloutDevice => ({
  device_id: id, stage, state, progress, error: null, updated_at: 1_700_000_200,
})

afterEach(() => vi.unstubAllGlobals())

function serve(current: () => Rollout, answer: (r: RecordedRequest) => { status: number; body: unknown } | undefined = () => undefined) {
  return stubFetch((request) => {
    const special = answer(request)
    if (special) return special
    if (request.url.includes('after=pnp-02')) return { status: 200, body: { success: true, rollout: current(), devices: [machine('pnp-03', 1, 'pending')] } }
    return { status: 200, body: { success: true, rollout: current(), devices: [machine('pnp-01', 0, 'installed'), machine('pnp-02', 0, 'downloading', 40)], next_after: 'pnp-02' } }
  })
}
const show = () => renderRoute('/firmware/rollouts/:id', <RolloutPage />, '/firmware/rollouts/ro-1')
const button = (name: string) => screen.getByRole('button', { name }) as HTMLButtonElement

describe('rollout page', () => {
  it('shows the rollout id, its progress, counts and machines', async () => {
    serve(() => rollout())
    show()
    screen.getByRole('heading', { name: 'ro-1', level: 1 })
    const bar = await screen.findByRole('progressbar', { name: 'Rollout progress' })
    expect([bar.getAttribute('aria-valuenow'), bar.getAttribute('aria-valuemax'), bar.getAttribute('aria-valuetext')]).toEqual(['1', '3', '1 of 3 installed'])
    const table = screen.getByRole('table', { name: 'Rollout machines' })
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Machine', 'Stage', 'State', 'Progress', 'Updated'])
    const rows = within(table).getAllByRole('row').slice(1)
    expect(rows.map((r) => within(r).getAllByRole('cell').slice(0, 4).map((c) => c.textContent))).toEqual([
      ['pnp-01', '1 (50%)', 'Installed', '—'],
      ['pnp-02', '1 (50%)', 'Downloading', '40%'],
    ])
    expect(document.body.textContent).toContain('State: Running')
    expect(document.body.textContent).toContain('Stage 1 of 2: 50% of the machines')
  })

  it('shows the selector the rollout was created from, and nothing of one made from ids', async () => {
    serve(() => rollout({ selector: 'site=sz,line in (l1,l2)' }))
    show()
    await screen.findByRole('progressbar', { name: 'Rollout progress' })
    expect(screen.getByText('site=sz,line in (l1,l2)').closest('p')!.textContent).toBe('Machines matching the selector when it started: site=sz,line in (l1,l2)')
  })

  it('says in words that a stage waits on the KPI gate, and why a rollout paused', async () => {
    let current = rollout({ kpi_gate: { max_miss_rate_increase: 0.002, min_placements: 1000, wait_seconds: 86_400 }, gate: 'waiting', pause_reason: null } as Partial<Rollout>)
    serve(() => current)
    const { client } = show()
    await screen.findByRole('progressbar', { name: 'Rollout progress' })
    expect(document.body.textContent).toContain('KPI gate: waiting for enough placements after installing before the next stage opens.')
    expect(document.body.textContent).toContain('KPI gate: pause if the miss rate rises by more than 0.2% after 1,000 placements (or 86,400 s)')
    expect(document.body.textContent).not.toContain('Paused because')
    current = rollout({ state: 'paused', kpi_gate: { max_miss_rate_increase: 0.002, min_placements: 1000, wait_seconds: 86_400 }, gate: null, pause_reason: 'kpi_regression' } as Partial<Rollout>)
    act(() => routeEvent(client, { event: 'rollout', data: JSON.stringify({ rollout_id: 'ro-1', release_id: 'rel-22', state: 'paused', stage: 0, counts: current.counts, gate: null, pause_reason: 'kpi_regression', at: 3 }) }))
    await waitFor(() => expect(document.body.textContent).toContain('Paused because: the miss rate of the stage’s machines rose more than the KPI gate allows after installing (KPI regression).'.replace('’', "'")))
    expect(document.body.textContent).not.toContain('KPI gate: waiting')
  })

  it('enables only the actions that apply to the rollout’s state', async () => {
    let current = rollout()
    serve(() => current)
    const { client } = show()
    await screen.findByRole('progressbar', { name: 'Rollout progress' })
    expect([button('Pause').disabled, button('Resume').disabled, button('Abort').disabled]).toEqual([false, true, false])
    act(() => routeEvent(client, { event: 'rollout', data: JSON.stringify({ rollout_id: 'ro-1', release_id: 'rel-22', state: 'paused', stage: 0, counts: current.counts, at: 1 }) }))
    await waitFor(() => expect([button('Pause').disabled, button('Resume').disabled, button('Abort').disabled]).toEqual([true, false, false]))
    current = rollout({ state: 'completed' })
    act(() => routeEvent(client, { event: 'rollout', data: JSON.stringify({ rollout_id: 'ro-1', release_id: 'rel-22', state: 'completed', stage: 1, counts: current.counts, at: 2 }) }))
    await waitFor(() => expect([button('Pause').disabled, button('Resume').disabled, button('Abort').disabled]).toEqual([true, true, true]))
  })

  it('pauses with the server’s answer and shows a 409’s message', async () => {
    const requests = serve(
      () => rollout(),
      (r) => {
        if (r.url.endsWith('/pause')) return { status: 200, body: { success: true, rollout: rollout({ state: 'paused' }) } }
        if (r.url.endsWith('/resume')) return { status: 409, body: { success: false, error: 'conflict', message: 'rollout ro-1 is not paused' } }
        return undefined
      },
    )
    show()
    await screen.findByRole('progressbar', { name: 'Rollout progress' })
    fireEvent.click(button('Pause'))
    await waitFor(() => expect(button('Resume').disabled).toBe(false))
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual(['/api/v1/admin/firmware/slave/rollouts/ro-1/pause'])
    fireEvent.click(button('Resume'))
    expect((await screen.findByRole('alert')).textContent).toBe('rollout ro-1 is not paused')
  })

  it('aborts only after "Confirm" in a dialog', async () => {
    const requests = serve(
      () => rollout(),
      (r) => (r.url.endsWith('/abort') ? { status: 200, body: { success: true, rollout: rollout({ state: 'aborted' }) } } : undefined),
    )
    show()
    await screen.findByRole('progressbar', { name: 'Rollout progress' })
    fireEvent.click(button('Abort'))
    const dialog = screen.getByRole('dialog', { name: 'Abort' })
    expect(dialog.textContent).toContain('Abort rollout ro-1?')
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    expect(requests.filter((r) => r.method === 'POST')).toEqual([])
    fireEvent.click(button('Abort'))
    fireEvent.click(within(screen.getByRole('dialog', { name: 'Abort' })).getByRole('button', { name: 'Confirm' }))
    await waitFor(() => expect(document.body.textContent).toContain('State: Aborted'))
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual(['/api/v1/admin/firmware/slave/rollouts/ro-1/abort'])
  })

  it('loads more machines with the API’s cursor, and moves rows live', async () => {
    const requests = serve(() => rollout())
    const { client } = show()
    const table = await screen.findByRole('table', { name: 'Rollout machines' })
    fireEvent.click(button('Load more'))
    await within(table).findByRole('link', { name: 'pnp-03' })
    expect(requests.map((r) => r.url)).toEqual([
      '/api/v1/admin/firmware/slave/rollouts/ro-1?limit=100',
      '/api/v1/admin/firmware/slave/rollouts/ro-1?limit=100&after=pnp-02',
    ])
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull()
    act(() =>
      routeEvent(client, { event: 'rollout-device', data: JSON.stringify({ rollout_id: 'ro-1', device_id: 'pnp-03', stage: 1, state: 'failed', progress: null, error: 'crc32 mismatch', at: 1_700_000_300 }) }),
    )
    const stateOf = (id: string) => within(within(table).getAllByRole('row').find((r) => r.textContent?.includes(id))!).getAllByRole('cell')[2]!.textContent
    await waitFor(() => expect(stateOf('pnp-03')).toBe('Failed: crc32 mismatch'))
    expect(stateOf('pnp-02')).toBe('Downloading')
    expect(requests).toHaveLength(2)
  })
})
