import { fireEvent, render, screen, waitFor } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import { setupI18n } from '../../i18n/i18n'
import { ConfirmButton } from './confirm-button'

const setup = (onConfirm: () => Promise<string>) => {
  setupI18n('en')
  render(<ConfirmButton label="Clear logs" question="Delete every log entry of iot-1?" onConfirm={onConfirm} />)
  fireEvent.click(screen.getByRole('button', { name: 'Clear logs' }))
  return screen.getByRole('dialog', { name: 'Clear logs' })
}

describe('clearing behind a confirmation dialog', () => {
  it('asks first, and Cancel clears nothing', () => {
    const onConfirm = vi.fn(async () => '3 deleted.')
    const dialog = setup(onConfirm)
    expect(dialog.textContent).toContain('Delete every log entry of iot-1?')
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }))
    expect(onConfirm).not.toHaveBeenCalled()
    expect(screen.queryByRole('dialog')).toBeNull()
  })

  it('clears on Confirm, closes the dialog and says how many were deleted', async () => {
    const onConfirm = vi.fn(async () => '3 deleted.')
    setup(onConfirm)
    fireEvent.click(screen.getByRole('button', { name: 'Confirm' }))
    expect((await screen.findByRole('status')).textContent).toBe('3 deleted.')
    expect(onConfirm).toHaveBeenCalledTimes(1)
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
  })

  it('cannot be opened while the action does not apply', () => {
    setupI18n('en')
    render(<ConfirmButton label="Abort" question="Abort?" onConfirm={async () => ''} disabled />)
    expect((screen.getByRole('button', { name: 'Abort' }) as HTMLButtonElement).disabled).toBe(true)
  })

  it('keeps the dialog open with the server’s message when the clear fails', async () => {
    setup(async () => {
      throw new Error('Administrator rights required')
    })
    fireEvent.click(screen.getByRole('button', { name: 'Confirm' }))
    expect((await screen.findByRole('alert')).textContent).toBe('Administrator rights required')
    screen.getByRole('dialog', { name: 'Clear logs' })
  })
})
