import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { renderRoute } from '../../../../testing/render-route'
import { stubFetch } from '../../../../testing/stub-fetch'
import type { Release } from '../get-releases'
import { StartRolloutButton } from './start-rollout-dialog'

const release = (build: number, state: Release['state'] = 'published'): Release => ({
  release_id: `rel-${build}`, image_version: build, display_version: `1.4.2-${build}`, state, size: 1000, sha256: 'a'.repeat(64),
  created_at: 1_700_000_000, created_by: 'root', download_count: 0,
})
const RELEASES = [release(22), release(21, 'active')]
const ROLLOUT = {
  rollout_id: 'ro-1', release_id: 'rel-22', display_version: '1.4.2-22', state: 'running', stage: 0, stages: [10, 100], max_failure_ratio: 0.1,
  soak_seconds: 0, created_at: 1_700_000_100, created_by: 'root', targeted: 3,
  counts: { pending: 2, waiting: 1, offered: 0, downloading: 0, installing: 0, installed: 0, failed: 0 },
}

afterEach(() => vi.unstubAllGlobals())

const open = () => {
  renderRoute('/firmware', <StartRolloutButton releases={RELEASES} />, '/firmware')
  fireEvent.click(screen.getByRole('button', { name: 'Start rollout' }))
  return screen.getByRole('dialog', { name: 'Start rollout' })
}
const fill = (dialog: HTMLElement, name: string, value: string) => fireEvent.change(within(dialog).getByRole('textbox', { name }), { target: { value } })
const press = (dialog: HTMLElement, name: string) => fireEvent.click(within(dialog).getByRole('button', { name }))

describe('"Start rollout" dialog', () => {
  it('offers the releases, the newest one not active chosen, with the contract’s defaults', () => {
    const dialog = open()
    const select = within(dialog).getByRole('combobox', { name: 'Release' }) as HTMLSelectElement
    expect(within(select).getAllByRole('option').map((o) => o.textContent)).toEqual(['1.4.2-22 (rel-22)', '1.4.2-21 (rel-21), active'])
    expect(select.value).toBe('rel-22')
    expect((within(dialog).getByRole('textbox', { name: 'Stages' }) as HTMLInputElement).value).toBe('10, 100')
    expect((within(dialog).getByRole('textbox', { name: 'Max failure ratio' }) as HTMLInputElement).value).toBe('0.1')
  })

  it('says what is wrong with the stages and sends nothing', () => {
    const requests = stubFetch(() => ({ status: 500, body: {} }))
    const dialog = open()
    fill(dialog, 'Stages', '50, 10, 100')
    press(dialog, 'Start')
    expect(within(dialog).getByRole('alert').textContent).toBe('Stages must rise: 10 comes after 50.')
    const stages = within(dialog).getByRole('textbox', { name: 'Stages' })
    expect(stages.getAttribute('aria-invalid')).toBe('true')
    expect(document.activeElement).toBe(stages)
    fill(dialog, 'Stages', '10, 50')
    expect(within(dialog).getByRole('alert').textContent).toBe('The last stage must be 100 (every machine), not 50.')
    fill(dialog, 'Stages', '10, 100')
    fill(dialog, 'Max failure ratio', '2')
    press(dialog, 'Start')
    expect(within(dialog).getByRole('alert').textContent).toBe('Max failure ratio must be a number from 0 to 1, e.g. 0.1.')
    expect(within(dialog).queryByRole('button', { name: 'Confirm' })).toBeNull()
    expect(requests).toEqual([])
  })

  it('asks before sending, then starts the rollout and opens its page', async () => {
    const requests = stubFetch(() => ({ status: 201, body: { success: true, rollout: ROLLOUT } }))
    const dialog = open()
    fill(dialog, 'Stages', '10%, 50%, 100%')
    fill(dialog, 'Max failure ratio', '0.25')
    press(dialog, 'Start')
    expect(dialog.textContent).toContain('Release 1.4.2-22 (rel-22) will be offered to every known machine in 3 stages: 10% → 50% → 100%.')
    expect(dialog.textContent).toContain('If more than 25% of a stage')
    expect(requests).toEqual([])
    press(dialog, 'Confirm')
    await waitFor(() => expect(screen.getByRole('status', { name: 'location' }).textContent).toBe('/firmware/rollouts/ro-1'))
    expect(requests).toEqual([
      { method: 'POST', url: '/api/v1/admin/firmware/slave/rollouts', body: { release_id: 'rel-22', stages: [10, 50, 100], max_failure_ratio: 0.25 } },
    ])
  })

  it('sends the optional KPI gate only when "Max miss-rate increase" is filled, checking its fields first', async () => {
    const requests = stubFetch(() => ({ status: 201, body: { success: true, rollout: ROLLOUT } }))
    const dialog = open()
    expect(within(dialog).getByRole('group', { name: 'KPI gate (optional)' })).toBeTruthy()
    expect((within(dialog).getByRole('textbox', { name: 'Max miss-rate increase' }) as HTMLInputElement).value).toBe('')
    expect((within(dialog).getByRole('textbox', { name: 'Min placements' }) as HTMLInputElement).value).toBe('1000')
    expect((within(dialog).getByRole('textbox', { name: 'Wait (seconds)' }) as HTMLInputElement).value).toBe('86400')
    fill(dialog, 'Max miss-rate increase', '1.5')
    press(dialog, 'Start')
    expect(within(dialog).getByRole('alert').textContent).toBe('Max miss-rate increase must be a number from 0 to 1, e.g. 0.002.')
    expect(document.activeElement).toBe(within(dialog).getByRole('textbox', { name: 'Max miss-rate increase' }))
    fill(dialog, 'Max miss-rate increase', '0.002')
    fill(dialog, 'Min placements', '0')
    press(dialog, 'Start')
    expect(within(dialog).getByRole('alert').textContent).toBe('Min placements must be a whole number from 1.')
    fill(dialog, 'Min placements', '500')
    fill(dialog, 'Wait (seconds)', '3600')
    press(dialog, 'Start')
    expect(dialog.textContent).toContain('The KPI gate pauses the rollout if a stage')
    expect(dialog.textContent).toContain('0.2%')
    press(dialog, 'Confirm')
    await waitFor(() => expect(requests).toHaveLength(1))
    expect(requests[0]!.body).toEqual({ release_id: 'rel-22', stages: [10, 100], max_failure_ratio: 0.1, kpi_gate: { max_miss_rate_increase: 0.002, min_placements: 500, wait_seconds: 3600 } })
  })

  it('goes back to the fields without sending, keeping what was typed', () => {
    const requests = stubFetch(() => ({ status: 500, body: {} }))
    const dialog = open()
    fill(dialog, 'Stages', '20, 100')
    press(dialog, 'Start')
    press(dialog, 'Back')
    expect((within(dialog).getByRole('textbox', { name: 'Stages' }) as HTMLInputElement).value).toBe('20, 100')
    expect(requests).toEqual([])
  })

  it('shows the server’s refusal in the dialog', async () => {
    stubFetch(() => ({ status: 409, body: { success: false, error: 'conflict', message: 'rollout ro-0 is running; pause or abort it first' } }))
    const dialog = open()
    press(dialog, 'Start')
    press(dialog, 'Confirm')
    expect((await within(dialog).findByRole('alert')).textContent).toBe('rollout ro-0 is running; pause or abort it first')
    within(dialog).getByRole('textbox', { name: 'Stages' })
  })

  describe('with a selector', () => {
    /** Knows `site=sz` (2 machines) and `site=none` (0); refuses an unclosed "(". */
    const serve = () =>
      stubFetch(({ method, url }) => {
        if (method === 'POST') return { status: 201, body: { success: true, rollout: { ...ROLLOUT, selector: 'site=sz', targeted: 2 } } }
        const selector = new URL(url, 'http://x').searchParams.get('selector') ?? ''
        if (selector.includes('(')) return { status: 400, body: { success: false, error: 'invalid_selector', message: "expected ')' at position 8", position: 8 } }
        const total = selector === 'site=sz' ? 2 : 0
        return { status: 200, body: { success: true, devices: [], counts: { total, online: total } } }
      })
    const chooseSelector = (dialog: HTMLElement) => fireEvent.click(within(dialog).getByRole('radio', { name: 'Machines matching a selector' }))

    it('targets every known machine by default, and counts a selector’s machines as it is typed', async () => {
      const requests = serve()
      const dialog = open()
      expect((within(dialog).getByRole('radio', { name: 'Every known machine' }) as HTMLInputElement).checked).toBe(true)
      expect(within(dialog).queryByRole('textbox', { name: 'Selector' })).toBeNull()
      chooseSelector(dialog)
      fill(dialog, 'Selector', 'site=s')
      fill(dialog, 'Selector', 'site=sz')
      expect(await within(dialog).findByText('2 machines match now.')).toBeTruthy()
      expect(requests.map((r) => r.url)).toEqual(['/api/v1/devices?selector=site%3Dsz&counts=true&limit=1'])
    })

    it('asks with the count, then sends the selector instead of machines', async () => {
      const requests = serve()
      const dialog = open()
      chooseSelector(dialog)
      fill(dialog, 'Selector', ' site=sz ')
      press(dialog, 'Start')
      await within(dialog).findByRole('button', { name: 'Confirm' })
      expect(dialog.textContent).toContain('Release 1.4.2-22 (rel-22) will be offered to the machines matching site=sz in 2 stages: 10% → 100%.')
      expect(dialog.textContent).toContain('2 machines match it now; machines that match later are not added.')
      press(dialog, 'Confirm')
      await waitFor(() => expect(screen.getByRole('status', { name: 'location' }).textContent).toBe('/firmware/rollouts/ro-1'))
      expect(requests.filter((r) => r.method === 'POST')).toEqual([
        { method: 'POST', url: '/api/v1/admin/firmware/slave/rollouts', body: { release_id: 'rel-22', stages: [10, 100], max_failure_ratio: 0.1, selector: 'site=sz' } },
      ])
    })

    it('will not go on with an empty selector, one matching nothing, or a malformed one', async () => {
      const requests = serve()
      const dialog = open()
      chooseSelector(dialog)
      press(dialog, 'Start')
      expect((await within(dialog).findByRole('alert')).textContent).toBe('Enter a selector, e.g. site=sz.')
      fill(dialog, 'Selector', 'site=none')
      press(dialog, 'Start')
      await waitFor(() => expect(within(dialog).getByRole('alert').textContent).toBe('No machine matches this selector.'))
      const field = within(dialog).getByRole('textbox', { name: 'Selector' })
      expect(document.activeElement).toBe(field)
      fill(dialog, 'Selector', 'site in (')
      press(dialog, 'Start')
      await waitFor(() => expect(within(dialog).getByRole('alert').textContent).toContain("Invalid selector: expected ')' at position 8"))
      expect(field.getAttribute('aria-invalid')).toBe('true')
      expect(within(dialog).queryByRole('button', { name: 'Confirm' })).toBeNull()
      expect(requests.filter((r) => r.method === 'POST')).toEqual([])
    })
  })
})
