import { render, screen, within } from '@testing-library/react'
import { createMemoryRouter, RouterProvider } from 'react-router'
import { beforeAll, describe, expect, it } from 'vitest'
import type { DeviceRecord } from '../../../api/types'
import { changeLanguage, setupI18n } from '../../../i18n/i18n'
import { MachinesTable } from './machines-table'

const row = (id: string, alive: boolean): DeviceRecord => ({
  device_id: id, labels: {}, rated_cph: null, hostname: id, ip: '', version: '2.3.1', connect_time: null, last_heartbeat: null, last_status: {}, messages_sent: 0, messages_received: 0, alive, registered: alive, connected: alive,
})

const renderTable = (rows: DeviceRecord[]) =>
  render(<RouterProvider router={createMemoryRouter([{ path: '/', element: <MachinesTable rows={rows} /> }])} />)

describe('machines table', () => {
  beforeAll(() => setupI18n('en'))

  it('names the table, links each machine and reads Online or Offline', () => {
    renderTable([row('pnp-01', true), row('pnp-02', false)])
    const table = screen.getByRole('table', { name: 'Machines' })
    const [, first, second] = within(table).getAllByRole('row')
    expect(within(first!).getByRole('link', { name: 'pnp-01' }).getAttribute('href')).toBe('/machines/pnp-01')
    expect(within(first!).getAllByRole('cell')[1]!.textContent).toBe('Online')
    expect(within(second!).getAllByRole('cell')[1]!.textContent).toBe('Offline')
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Machine', 'Status', 'Version', 'Last heartbeat', 'Labels'])
  })

  it('reads in Chinese after switching the language', () => {
    changeLanguage('zh-CN')
    renderTable([row('pnp-01', true)])
    expect(screen.getByRole('table', { name: '机器' })).toBeTruthy()
    expect(screen.getByText('在线')).toBeTruthy()
    changeLanguage('en')
  })
})
