import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Alert, Notice } from './alert'
import { Dialog } from './dialog'

export interface ConfirmButtonProps {
  /** The button's name, and the dialog's title. */
  label: string
  /** What will happen, asked in the dialog. */
  question: string
  /** Runs only after "Confirm"; resolves to what to announce afterwards. */
  onConfirm: () => Promise<string>
  /** The action does not apply right now. */
  disabled?: boolean
}

/** A destructive action behind a confirmation dialog ("Confirm" / "Cancel"). */
export function ConfirmButton({ label, question, onConfirm, disabled = false }: ConfirmButtonProps) {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const confirm = async () => {
    setBusy(true)
    setError(null)
    try {
      setDone(await onConfirm())
      setOpen(false)
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <button
        type="button"
        className="secondary"
        disabled={disabled}
        onClick={() => {
          setDone(null)
          setError(null)
          setOpen(true)
        }}
      >
        {label}
      </button>
      {done ? <Notice>{done}</Notice> : null}
      <Dialog open={open} title={label} onClose={() => setOpen(false)}>
        <p>{question}</p>
        {error ? <Alert>{error}</Alert> : null}
        <div className="actions">
          <button type="button" onClick={() => void confirm()} disabled={busy}>
            {t('app.confirm')}
          </button>
          <button type="button" className="secondary" onClick={() => setOpen(false)} autoFocus>
            {t('app.cancel')}
          </button>
        </div>
      </Dialog>
    </>
  )
}
