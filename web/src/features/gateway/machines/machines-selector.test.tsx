import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { changeLanguage } from '../../../i18n/i18n'
import { renderRoute } from '../../../testing/render-route'
import { stubFetch } from '../../../testing/stub-fetch'
import { MachinesPage } from './machines-page'

const record = (id: string, labels: Record<string, string>) => ({
  device_id: id, labels, hostname: id, ip: '', version: '1', connect_time: null, last_heartbeat: null, last_status: {}, messages_sent: 0, messages_received: 0,
  alive: true, registered: true, connected: true,
})
const FLEET = [record('pnp-01', { site: 'sz', line: 'l1' }), record('pnp-02', { site: 'gz' }), record('pnp-03', { site: 'sz' })]

/** A server that knows `site=…` selectors and refuses anything with a "(" that is not closed. */
function serve() {
  return stubFetch(({ url }) => {
    const params = new URL(url, 'http://x').searchParams
    const selector = params.get('selector') ?? ''
    if (selector.includes('(') && !selector.includes(')'))
      return { status: 400, body: { success: false, error: 'invalid_selector', message: `expected ')' at position ${selector.length}`, position: selector.length } }
    const site = /^site=(\w+)$/.exec(selector)?.[1]
    const devices = FLEET.filter((d) => d.device_id.startsWith(params.get('prefix') ?? '') && (!site || d.labels.site === site))
    return { status: 200, body: { success: true, devices, counts: { total: devices.length, online: devices.length } } }
  })
}

const table = () => screen.findByRole('table', { name: 'Machines' })
const ids = async () => within(await table()).getAllByRole('link').map((l) => l.textContent)
const apply = (selector: string) => {
  fireEvent.change(screen.getByRole('textbox', { name: 'Selector' }), { target: { value: selector } })
  fireEvent.click(screen.getByRole('button', { name: 'Apply' }))
}

describe('machines page: selector', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    changeLanguage('en')
  })

  it('shows each machine’s labels in column "Labels"', async () => {
    serve()
    renderRoute('/machines', <MachinesPage />, '/machines')
    const rows = within(await table()).getAllByRole('row').slice(1)
    expect(rows.map((r) => within(r).getAllByRole('cell')[4]!.textContent)).toEqual(['line=l1site=sz', 'site=gz', 'site=sz'])
  })

  it('applies the selector from the URL with the id search, counts the matches, and clears it', async () => {
    const requests = serve()
    const { router } = renderRoute('/machines', <MachinesPage />, '/machines?q=pnp&after=pnp-01')
    await table()
    apply('site=sz')
    await waitFor(() => expect(router.state.location.search).toBe('?q=pnp&selector=site%3Dsz'))
    await waitFor(async () => expect(await ids()).toEqual(['pnp-01', 'pnp-03']))
    expect(screen.getByText('2 of 2 matching machines online')).toBeTruthy()
    expect(requests.at(-1)!.url).toBe('/api/v1/devices?limit=100&counts=true&prefix=pnp&selector=site%3Dsz')
    fireEvent.click(screen.getByRole('button', { name: 'Clear selector' }))
    await waitFor(() => expect(router.state.location.search).toBe('?q=pnp'))
    await waitFor(async () => expect(await ids()).toEqual(['pnp-01', 'pnp-02', 'pnp-03']))
    expect((screen.getByRole('textbox', { name: 'Selector' }) as HTMLInputElement).value).toBe('')
  })

  it('says when nothing matches', async () => {
    serve()
    renderRoute('/machines', <MachinesPage />, '/machines?selector=site%3Dsh')
    expect(await screen.findByText('No machine matches “site=sh”.')).toBeTruthy()
    expect((screen.getByRole('textbox', { name: 'Selector' }) as HTMLInputElement).value).toBe('site=sh')
  })

  it('shows the server’s message of a malformed selector at the field, marked where it went wrong, in both languages', async () => {
    serve()
    renderRoute('/machines', <MachinesPage />, '/machines')
    await table()
    apply('line in (l1')
    const alert = await screen.findByRole('alert')
    expect(alert.querySelector('span')!.textContent).toBe("Invalid selector: expected ')' at position 11")
    expect(alert.querySelector('mark')!.textContent).toBe(' ')
    const field = screen.getByRole('textbox', { name: 'Selector' })
    expect(field.getAttribute('aria-invalid')).toBe('true')
    expect(field.getAttribute('aria-describedby')).toContain(alert.id)
    expect(screen.queryByRole('table', { name: 'Machines' })).toBeNull()
    changeLanguage('zh-CN')
    await waitFor(() => expect(screen.getByRole('alert').querySelector('span')!.textContent).toBe("选择器无效：expected ')' at position 11"))
    expect(screen.getByRole('textbox', { name: '选择器' })).toBeTruthy()
  })
})
