import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { renderRoute } from '../../../testing/render-route'
import { stubFetch, type RecordedRequest } from '../../../testing/stub-fetch'
import { ProductionPage } from './production-page'
import { group } from './production-test-data'

afterEach(() => vi.unstubAllGlobals())

const labels = { success: true, keys: [{ key: 'line', values: [{ value: 'l1', devices: 2 }, { value: 'l2', devices: 1 }] }, { key: 'site', values: [{ value: 'sz', devices: 3 }] }] }

function serve(groups: (request: RecordedRequest) => ReturnType<typeof group>[]) {
  return stubFetch((request) => {
    if (request.url.startsWith('/api/v1/devices/labels')) return { status: 200, body: labels }
    if (request.url.startsWith('/api/v1/production')) {
      const g = groups(request)
      return { status: 200, body: { success: true, from: 1, to: 2, groups: g, total: { ...group(null), key: undefined, devices: g.length } } }
    }
    return { status: 404, body: { success: false, error: 'not_found', message: request.url } }
  })
}
const show = (at = '/production') => renderRoute('/production', <ProductionPage />, at)
const rowsOf = (table: HTMLElement) => within(table).getAllByRole('row').slice(1).map((r) => within(r).getAllByRole('cell').map((c) => c.textContent))
const queryOf = (r: RecordedRequest) => new URL(r.url, 'http://x').searchParams

describe('production page', () => {
  it('groups by machine over the last 24 hours, with every column of table "Production" and chart "OEE"', async () => {
    const requests = serve(() => [group('pnp-01', { devices: 1, placed: 12345, missed: 67, cph: 3987.6 }), group('pnp-02')])
    show()
    const table = await screen.findByRole('table', { name: 'Production' })
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Group', 'Machines', 'OEE', 'Availability', 'Performance', 'Quality', 'CPH', 'Placed', 'Missed'])
    expect(rowsOf(table)[0]).toEqual(['pnp-01', '1', '89.7%', '90%', '100%', '99.7%', '3,988', '12,345', '67'])
    expect(within(table).getByRole('link', { name: 'pnp-01' }).getAttribute('href')).toBe('/machines/pnp-01')
    expect(screen.getByRole('img', { name: 'OEE' })).toBeTruthy()
    const q = queryOf(requests.find((r) => r.url.startsWith('/api/v1/production'))!)
    expect(q.get('group_by')).toBe('device')
    expect(Number(q.get('to')) - Number(q.get('from'))).toBe(86_400)
  })

  it('asks again grouped by the label key chosen in "Group by", and by the range chosen', async () => {
    const requests = serve((r) => (queryOf(r).get('group_by') === 'label:line' ? [group('l1', { devices: 2 }), group(null, { devices: 1 })] : [group('pnp-01')]))
    show()
    await screen.findByRole('table', { name: 'Production' })
    const groupBy = screen.getByRole('combobox', { name: 'Group by' }) as HTMLSelectElement
    await waitFor(() => expect([...groupBy.options].map((o) => o.textContent)).toEqual(['Machine', 'Label line', 'Label site']))
    fireEvent.change(groupBy, { target: { value: 'label:line' } })
    await waitFor(() => expect(rowsOf(screen.getByRole('table', { name: 'Production' })).map((r) => r.slice(0, 2))).toEqual([['line=l1', '2'], ['Without label line', '1']]))
    fireEvent.change(screen.getByRole('combobox', { name: 'Range' }), { target: { value: '7d' } })
    await waitFor(() => expect(requests.filter((r) => r.url.startsWith('/api/v1/production')).length).toBe(3))
    const last = queryOf(requests.filter((r) => r.url.startsWith('/api/v1/production')).at(-1)!)
    expect(last.get('group_by')).toBe('label:line')
    expect(Number(last.get('to')) - Number(last.get('from'))).toBe(7 * 86_400)
  })

  it('shows a figure the server could not compute as "—" with the reason in words', async () => {
    serve(() => [group('pnp-03', { cph: null, availability: null, performance: null, quality: null, oee: null, placed: 0, missed: 0 })])
    show()
    const table = await screen.findByRole('table', { name: 'Production' })
    const cells = within(within(table).getAllByRole('row')[1]!).getAllByRole('cell')
    for (const i of [2, 3, 4, 5, 6]) expect(within(cells[i]!).getByText('—').getAttribute('aria-hidden')).toBe('true')
    expect(cells[2]!.textContent).toContain('No figure: availability, performance or quality is unknown')
    expect(cells[6]!.textContent).toContain('No figure: no productive time in this range')
    expect(cells[5]!.querySelector('[title]')!.getAttribute('title')).toBe('No figure: nothing placed or missed')
  })

  it('shows ratios over 100% as they are, not capped', async () => {
    serve(() => [group('fast', { performance: 1.125, oee: 1.0125 })])
    show()
    const table = await screen.findByRole('table', { name: 'Production' })
    expect(rowsOf(table)[0]!.slice(2, 5)).toEqual(['101.3%', '90%', '112.5%'])
    expect(within(screen.getByRole('img', { name: 'OEE' })).getByText('101.3%')).toBeTruthy()
  })
})
