import { fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { platformKeys } from '../../../api/query-keys'
import { META, renderWithClient, stubFetch } from '../platform-test-utils'
import type { CommandList } from '../platform-types'
import { CommandForm } from './command-form'
import { fieldsOf } from './param-fields'

const chooseAction = (action: string) => fireEvent.change(screen.getByRole('combobox', { name: 'Action' }), { target: { value: action } })
const send = () => fireEvent.click(screen.getByRole('button', { name: 'Send' }))
const queued = (id: number, action: string, params: unknown) => ({
  status: 201,
  body: { success: true, command: { id, device_id: 'iot-1', action, params, status: 'pending', attempts: 0, created_at: 1 } },
})

afterEach(() => vi.unstubAllGlobals())

describe('command form generated from /api/admin/meta', () => {
  it('lists every action of meta in the Action select, in meta’s order', () => {
    renderWithClient(<CommandForm deviceId="iot-1" meta={META} />)
    const options = within(screen.getByRole('combobox', { name: 'Action' })).getAllByRole('option')
    expect(options.map((o) => o.textContent)).toEqual(META.actions.map((a) => a.action))
  })

  it('gives each param an input named by the param, typed by its schema', () => {
    renderWithClient(<CommandForm deviceId="iot-1" meta={META} />)
    const duration = screen.getByRole('spinbutton', { name: 'duration' })
    expect([duration.getAttribute('min'), duration.getAttribute('max'), duration.getAttribute('step')]).toEqual(['1', '10000', '1'])

    chooseAction('hid_click')
    expect(screen.queryByRole('spinbutton', { name: 'duration' })).toBeNull()
    const button = screen.getByRole('combobox', { name: 'button' })
    expect(within(button).getAllByRole('option').map((o) => o.textContent)).toEqual(['left', 'right', 'middle'])
    screen.getByRole('spinbutton', { name: 'hold' })

    chooseAction('hid_combo')
    const keys = screen.getByRole('listbox', { name: 'keys' })
    expect((keys as HTMLSelectElement).multiple).toBe(true)
    expect(within(keys).getAllByRole('option').map((o) => o.textContent)).toEqual(['A', 'B', 'C', 'ENTER', 'LCTRL'])

    chooseAction('expression')
    expect(within(screen.getByRole('combobox', { name: 'expression' })).getAllByRole('option').map((o) => o.textContent)).toEqual(['neutral', 'happy', 'sad'])

    chooseAction('hid_text')
    expect(screen.getByRole('textbox', { name: 'text' }).getAttribute('maxlength')).toBe('1024')

    chooseAction('hid_scroll')
    const wheel = screen.getByRole('spinbutton', { name: 'wheel' })
    expect([wheel.getAttribute('min'), wheel.getAttribute('max')]).toEqual(['-127', '127'])

    chooseAction('ping')
    expect(screen.getByText('This action takes no parameters.')).toBeTruthy()
  })

  it('sends integers as numbers and hid_combo keys as an array, and puts the queued command in the Commands cache', async () => {
    const requests = stubFetch(({ body }) => {
      const { action, params } = body as { action: string; params: unknown }
      return queued(7, action, params)
    })
    const { client } = renderWithClient(<CommandForm deviceId="iot-1" meta={META} />)
    client.setQueryData<CommandList>(platformKeys.commands('iot-1'), { success: true, commands: [] })

    fireEvent.change(screen.getByRole('spinbutton', { name: 'duration' }), { target: { value: '250' } })
    send()
    await screen.findByText('Command #7 queued.')
    expect(requests.at(-1)).toEqual({ method: 'POST', url: '/api/admin/device/iot-1/command', body: { action: 'bleep', params: { duration: 250 } } })
    expect(client.getQueryData<CommandList>(platformKeys.commands('iot-1'))?.commands.map((c) => c.id)).toEqual([7])

    chooseAction('hid_combo')
    const keys = screen.getByRole('listbox', { name: 'keys' }) as HTMLSelectElement
    for (const option of keys.options) option.selected = option.value === 'LCTRL' || option.value === 'C'
    fireEvent.change(keys)
    send()
    await waitFor(() => expect(requests).toHaveLength(2))
    expect(requests[1]!.body).toEqual({ action: 'hid_combo', params: { keys: ['C', 'LCTRL'] } })

    chooseAction('hid_click')
    fireEvent.change(screen.getByRole('combobox', { name: 'button' }), { target: { value: 'right' } })
    fireEvent.change(screen.getByRole('spinbutton', { name: 'hold' }), { target: { value: '0' } })
    send()
    await waitFor(() => expect(requests).toHaveLength(3))
    expect(requests[2]!.body).toEqual({ action: 'hid_click', params: { button: 'right', hold: 0 } })
  })

  it('shows the server’s 400 message in an alert', async () => {
    stubFetch(() => ({ status: 400, body: { success: false, error: 'bad_request', message: 'Invalid hid_scroll params.wheel: Expected union value (−127…127, not 0)' } }))
    renderWithClient(<CommandForm deviceId="iot-1" meta={META} />)
    chooseAction('hid_scroll')
    fireEvent.change(screen.getByRole('spinbutton', { name: 'wheel' }), { target: { value: '0' } })
    send()
    expect((await screen.findByRole('alert')).textContent).toContain('Invalid hid_scroll params.wheel')
  })
})

describe('param fields', () => {
  it('merges an anyOf of integer ranges into one range and falls back to JSON for unknown shapes', () => {
    expect(fieldsOf(META.actions.find((a) => a.action === 'hid_scroll')!.params)).toEqual([
      { kind: 'integer', name: 'wheel', min: -127, max: 127, hint: '−127…127, not 0' },
    ])
    expect(fieldsOf({ blob: { type: 'object' } })).toEqual([{ kind: 'json', name: 'blob', hint: undefined }])
  })
})
