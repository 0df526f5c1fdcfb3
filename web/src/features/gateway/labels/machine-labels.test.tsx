import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { DeviceRecord, Labels } from '../../../api/types'
import { changeLanguage } from '../../../i18n/i18n'
import { sessionStore } from '../../../session/session'
import { renderRoute } from '../../../testing/render-route'
import { stubFetch } from '../../../testing/stub-fetch'
import { MachineLabels } from './machine-labels'

const device = (labels: Labels): DeviceRecord => ({
  device_id: 'pnp-01', labels, rated_cph: null, hostname: 'pnp-01', ip: '', version: '1', connect_time: null, last_heartbeat: null, last_status: {},
  messages_sent: 0, messages_received: 0, alive: true, registered: true, connected: true,
})
const signIn = (role: 'admin' | 'user') =>
  sessionStore.signIn({ token: 'tok', expires_in: 3600, user: { id: '1', username: role === 'admin' ? 'root' : 'alice', display_name: 'X', role } })

const renderLabels = (labels: Labels) => renderRoute('/machines/:id', <MachineLabels id="pnp-01" device={device(labels)} />, '/machines/pnp-01')
const openDialog = () => {
  fireEvent.click(screen.getByRole('button', { name: 'Edit labels' }))
  return screen.getByRole('dialog', { name: 'Edit labels' })
}
const type = (dialog: HTMLElement, name: string, value: string) => fireEvent.change(within(dialog).getByRole('textbox', { name }), { target: { value } })
const press = (dialog: HTMLElement, name: string) => fireEvent.click(within(dialog).getByRole('button', { name }))

describe('machine labels', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    sessionStore.signOut()
    changeLanguage('en')
  })

  it('shows the labels in region "Labels"; a user gets no "Edit labels"', () => {
    signIn('user')
    renderLabels({ site: 'sz', retired: '' })
    const region = screen.getByRole('region', { name: 'Labels' })
    expect(within(region).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['retired', 'site=sz'])
    expect(screen.queryByRole('button', { name: 'Edit labels' })).toBeNull()
  })

  it('says a machine has none', () => {
    signIn('user')
    renderLabels({})
    expect(within(screen.getByRole('region', { name: 'Labels' })).getByText('No labels.')).toBeTruthy()
  })

  it('checks the rows by the server’s rules, naming the key, before sending anything', async () => {
    signIn('admin')
    const requests = stubFetch(() => ({ status: 500, body: {} }))
    renderLabels({ site: 'sz' })
    const dialog = openDialog()
    expect((within(dialog).getByRole('textbox', { name: 'Key 1' }) as HTMLInputElement).value).toBe('site')
    press(dialog, 'Add label')
    expect(document.activeElement).toBe(within(dialog).getByRole('textbox', { name: 'Key 2' }))
    type(dialog, 'Key 2', 'Line')
    type(dialog, 'Value 2', 'l1')
    press(dialog, 'Save')
    expect(within(dialog).getByRole('alert').textContent).toBe('Label key “Line” is not valid: use 1–63 characters of a–z 0–9 . _ / -, starting and ending with a letter or digit.')
    const key = within(dialog).getByRole('textbox', { name: 'Key 2' })
    expect(key.getAttribute('aria-invalid')).toBe('true')
    expect(document.activeElement).toBe(key)
    type(dialog, 'Key 2', 'line')
    type(dialog, 'Value 2', 'l 1')
    expect(within(dialog).getByRole('alert').textContent).toBe('The value of label “line” is not valid: use up to 63 characters of A–Z a–z 0–9 . _ -.')
    changeLanguage('zh-CN')
    await waitFor(() => expect(within(dialog).getByRole('alert').textContent).toBe('标签“line”的值无效：最多 63 个 A–Z a–z 0–9 . _ - 字符。'))
    expect(requests).toEqual([])
  })

  it('saves with PUT, replacing every label, and closes', async () => {
    signIn('admin')
    const requests = stubFetch(({ body }) => ({ status: 200, body: { success: true, device: device((body as { labels: Labels }).labels) } }))
    renderLabels({ site: 'sz', retired: '' })
    const dialog = openDialog()
    press(dialog, 'Remove label 1')
    type(dialog, 'Value 1', 'gz')
    press(dialog, 'Add label')
    type(dialog, 'Key 2', 'line')
    type(dialog, 'Value 2', 'l2')
    press(dialog, 'Save')
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
    expect(requests).toEqual([{ method: 'PUT', url: '/api/v1/admin/devices/pnp-01/labels', body: { labels: { site: 'gz', line: 'l2' } } }])
    expect(screen.getByRole('status').textContent).toBe('Labels of pnp-01 saved.')
  })

  it('shows the server’s refusal in the dialog', async () => {
    signIn('admin')
    stubFetch(() => ({ status: 404, body: { success: false, error: 'not_found', message: 'No device pnp-01' } }))
    renderLabels({ site: 'sz' })
    const dialog = openDialog()
    press(dialog, 'Save')
    expect((await within(dialog).findByRole('alert')).textContent).toBe('No device pnp-01')
  })
})
