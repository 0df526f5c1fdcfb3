import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Alert, Notice } from '../../../components/ui/alert'
import { Dialog } from '../../../components/ui/dialog'
import { useBindMachine } from './bind-machine'

export function BindMachineButton() {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  const bind = useBindMachine()
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    bind.mutate(
      { machine: String(form.get('machine')).trim(), username: String(form.get('username')), password: String(form.get('password')) },
      { onSuccess: () => setOpen(false) },
    )
  }
  return (
    <>
      <button
        type="button"
        onClick={() => {
          bind.reset()
          setOpen(true)
        }}
      >
        {t('machines.bind')}
      </button>
      {bind.isSuccess ? <Notice>{t('machines.bound', { id: bind.data.device_id })}</Notice> : null}
      <Dialog open={open} title={t('machines.bind')} onClose={() => setOpen(false)}>
        <p>{t('machines.bindHelp')}</p>
        <form onSubmit={submit} className="stack">
          <label>
            {t('machines.bindMachine')}
            <input name="machine" required autoFocus />
          </label>
          <label>
            {t('machines.bindUsername')}
            <input name="username" autoComplete="off" required />
          </label>
          <label>
            {t('machines.bindPassword')}
            <input name="password" type="password" autoComplete="off" required />
          </label>
          {bind.error ? <Alert>{bind.error.message}</Alert> : null}
          <div className="actions">
            <button type="submit" disabled={bind.isPending}>
              {t('machines.bindSubmit')}
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              {t('app.cancel')}
            </button>
          </div>
        </form>
      </Dialog>
    </>
  )
}
