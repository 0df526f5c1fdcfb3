import { render, screen, within } from '@testing-library/react'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Overview } from '../../../api/types'
import { setupI18n } from '../../../i18n/i18n'
import { OverviewRegion } from './overview-region'

const overview: Overview = {
  success: true,
  partial: true,
  device: { device_id: 'pnp-01', labels: {}, rated_cph: null, hostname: 'pnp-01', ip: '', version: '1', connect_time: 1, last_heartbeat: 1, last_status: {}, messages_sent: 0, messages_received: 0, alive: true, registered: true, connected: true },
  connection: { connected: true, alive: true, connect_time: 1, last_heartbeat: 1, messages_sent: 0, messages_received: 0 },
  status: {},
  detail: { system: { state: 'idle' }, task: {}, hardware: { x: 1 }, vision: {}, cameras: {}, debug: {} },
  partial_errors: { vision: { error: 'device_timeout', message: 'The machine did not answer in time' } },
}

describe('overview regions', () => {
  beforeAll(() => setupI18n('en'))

  it('shows a failed piece as an alert inside its own region while the others render', () => {
    render(
      <>
        <OverviewRegion piece="system" overview={overview} />
        <OverviewRegion piece="vision" overview={overview} />
      </>,
    )
    const vision = screen.getByRole('region', { name: 'Vision' })
    expect(within(vision).getByRole('alert').textContent).toBe('The machine did not answer in time')
    const system = screen.getByRole('region', { name: 'System' })
    expect(within(system).queryByRole('alert')).toBeNull()
    expect(system.textContent).toContain('idle')
  })
})
