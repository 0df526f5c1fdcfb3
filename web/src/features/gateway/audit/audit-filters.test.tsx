import { act, fireEvent, screen, waitFor, within } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { renderRoute } from '../../../testing/render-route'
import { AuditFilters } from './audit-filters'

const form = () => screen.getByRole('search', { name: 'Filters' })
const box = (name: string) => within(form()).getByRole('textbox', { name }) as HTMLInputElement
const type = (name: string, value: string) => fireEvent.change(box(name), { target: { value } })

describe('audit filters', () => {
  it('fills the boxes from the URL and puts what is applied back in it', async () => {
    const { router } = renderRoute('/audit', <AuditFilters />, '/audit?actor=robot&release_id=%201.2.3%20')
    expect([box('Action').value, box('Actor').value, box('Release').value]).toEqual(['', 'robot', '1.2.3'])
    type('Action', 'firmware.upload')
    fireEvent.click(within(form()).getByRole('button', { name: 'Apply' }))
    await waitFor(() => expect(router.state.location.search).toBe('?action=firmware.upload&actor=robot&release_id=1.2.3'))
    type('Actor', '  ')
    fireEvent.submit(form())
    await waitFor(() => expect(router.state.location.search).toBe('?action=firmware.upload&release_id=1.2.3'))
  })

  it('keeps what is typed right after "Clear filters", before the URL has changed', async () => {
    const { router } = renderRoute('/audit', <AuditFilters />, '/audit?actor=robot')
    const clear = within(form()).getByRole('button', { name: 'Clear filters' })
    // One act: the click's navigation (a transition) lands after the typing, as in a browser.
    act(() => {
      fireEvent.click(clear)
      type('Action', 'device.forget')
    })
    await waitFor(() => expect(router.state.location.search).toBe(''))
    expect([box('Action').value, box('Actor').value]).toEqual(['device.forget', ''])
    expect(clear).toHaveProperty('disabled', true)
    expect(document.activeElement).toBe(box('Action'))
  })

  it('refills the boxes when the filter changes from outside (Back, a link)', async () => {
    const { router } = renderRoute('/audit', <AuditFilters />, '/audit?actor=robot')
    type('Actor', 'half-typed')
    await act(() => router.navigate('/audit?action=release.activate'))
    expect([box('Action').value, box('Actor').value]).toEqual(['release.activate', ''])
    await act(() => router.navigate(-1))
    expect([box('Action').value, box('Actor').value]).toEqual(['', 'robot'])
  })
})
