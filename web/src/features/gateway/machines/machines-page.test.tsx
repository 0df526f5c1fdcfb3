import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { changeLanguage } from '../../../i18n/i18n'
import { renderRoute } from '../../../testing/render-route'
import { stubFetch } from '../../../testing/stub-fetch'
import { MachinesPage } from './machines-page'

const record = (id: string, alive: boolean) => ({
  device_id: id, labels: {}, hostname: id, ip: '', version: '1', connect_time: null, last_heartbeat: null, last_status: {}, messages_sent: 0, messages_received: 0, alive, registered: alive, connected: alive,
})

/** A server of 250 machines, every third one offline. */
function fleet() {
  const ids = Array.from({ length: 250 }, (_, i) => `pnp-${String(i).padStart(3, '0')}`)
  return stubFetch(({ url }) => {
    const params = new URL(url, 'http://x').searchParams
    const matching = ids.filter((id) => id.startsWith(params.get('prefix') ?? ''))
    const after = matching.filter((id) => id > (params.get('after') ?? ''))
    const rows = after.slice(0, Number(params.get('limit')))
    return {
      status: 200,
      body: {
        success: true,
        devices: rows.map((id) => record(id, Number(id.slice(4)) % 3 !== 0)),
        ...(after.length > rows.length ? { next_after: rows.at(-1) } : {}),
        counts: { total: matching.length, online: matching.filter((id) => Number(id.slice(4)) % 3 !== 0).length },
      },
    }
  })
}

const table = () => screen.findByRole('table', { name: 'Machines' })
const firstId = async () => within(await table()).getAllByRole('link')[0]!.textContent

describe('machines page', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    changeLanguage('en')
  })

  it('shows how many of all the machines are online, and asks the API for the counts', async () => {
    const requests = fleet()
    renderRoute('/machines', <MachinesPage />, '/machines')
    expect(await screen.findByText('166 of 250 online')).toBeTruthy()
    expect(requests[0]!.url).toBe('/api/v1/devices?limit=100&counts=true')
  })

  it('keeps the page’s cursor in the URL, numbers the pages, and pages back', async () => {
    const { router } = renderRoute('/machines', <MachinesPage />, '/machines')
    fleet()
    await screen.findByText('166 of 250 online')
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }))
    await waitFor(async () => expect(await firstId()).toBe('pnp-100'))
    expect(router.state.location.search).toBe('?after=pnp-099')
    expect(screen.getByText('Page 2')).toBeTruthy()
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }))
    await waitFor(async () => expect(await firstId()).toBe('pnp-200'))
    expect(screen.getByText('Page 3')).toBeTruthy()
    fireEvent.click(screen.getByRole('button', { name: 'Previous page' }))
    await waitFor(async () => expect(await firstId()).toBe('pnp-100'))
    expect(router.state.location.search).toBe('?after=pnp-099')
  })

  it('opens a page from a link cold: it says where it starts, and Previous goes to the first page', async () => {
    fleet()
    const { router } = renderRoute('/machines', <MachinesPage />, '/machines?after=pnp-149')
    await waitFor(async () => expect(await firstId()).toBe('pnp-150'))
    expect(screen.getByText('After pnp-149')).toBeTruthy()
    fireEvent.click(screen.getByRole('button', { name: 'Previous page' }))
    await waitFor(async () => expect(await firstId()).toBe('pnp-000'))
    expect(router.state.location.search).toBe('')
  })

  it('searches by id prefix from the URL, starting at the first page, and counts the matches', async () => {
    const requests = fleet()
    const { router } = renderRoute('/machines', <MachinesPage />, '/machines?after=pnp-099')
    await waitFor(async () => expect(await firstId()).toBe('pnp-100'))
    fireEvent.change(screen.getByRole('searchbox', { name: 'Find by machine id' }), { target: { value: 'pnp-24' } })
    await waitFor(() => expect(router.state.location.search).toBe('?q=pnp-24'))
    expect(await screen.findByText('6 of 10 matching machines online')).toBeTruthy()
    expect(within(await table()).getAllByRole('link').map((l) => l.textContent)).toEqual(Array.from({ length: 10 }, (_, i) => `pnp-24${i}`))
    expect(requests.at(-1)!.url).toBe('/api/v1/devices?limit=100&counts=true&prefix=pnp-24')
  })

  it('keeps the focus and what is being typed while the search is applied, and follows the URL when it changes from outside', async () => {
    fleet()
    const { router } = renderRoute('/machines', <MachinesPage />, '/machines')
    await screen.findByText('166 of 250 online')
    const box = screen.getByRole('searchbox', { name: 'Find by machine id' }) as HTMLInputElement
    box.focus()
    fireEvent.change(box, { target: { value: 'pnp-2' } })
    await waitFor(() => expect(router.state.location.search).toBe('?q=pnp-2'))
    await screen.findByText(/matching machines online$/)
    expect(document.activeElement).toBe(box)
    fireEvent.change(box, { target: { value: 'pnp-24' } })
    await waitFor(() => expect(router.state.location.search).toBe('?q=pnp-24'))
    expect(box.value).toBe('pnp-24')
    await router.navigate('/machines?q=pnp-1')
    await waitFor(() => expect(box.value).toBe('pnp-1'))
  })

  it('refuses a search no machine id can match, in English and Chinese, without asking the server', async () => {
    const requests = fleet()
    renderRoute('/machines', <MachinesPage />, '/machines')
    await screen.findByText('166 of 250 online')
    const asked = requests.length
    fireEvent.change(screen.getByRole('searchbox', { name: 'Find by machine id' }), { target: { value: 'pnp 1' } })
    expect(screen.getByRole('alert').textContent).toBe('A machine id has only letters, digits and . _ : -')
    expect(screen.getByRole('searchbox', { name: 'Find by machine id' }).getAttribute('aria-invalid')).toBe('true')
    changeLanguage('zh-CN')
    expect((await screen.findByRole('alert')).textContent).toBe('机器 ID 只含字母、数字和 . _ : -')
    expect(screen.getByRole('searchbox', { name: '按机器 ID 查找' })).toBeTruthy()
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(requests.length).toBe(asked)
  })
})
