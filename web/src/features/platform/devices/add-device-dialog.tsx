import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Alert } from '../../../components/ui/alert'
import { Dialog } from '../../../components/ui/dialog'
import { useAddDevice } from './add-device'

/** Button "Add device" and its dialog ("Device id", "Model", "Add"); the device token is shown once, in the dialog. */
export function AddDeviceButton() {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  const add = useAddDevice()
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    add.mutate({ device_id: String(form.get('device_id')).trim(), model: String(form.get('model')).trim() })
  }
  const close = () => {
    setOpen(false)
    // Forget the token once the dialog closes: it is shown only once.
    add.reset()
  }
  return (
    <>
      <button
        type="button"
        onClick={() => {
          add.reset()
          setOpen(true)
        }}
      >
        {t('platform.addDevice')}
      </button>
      <Dialog open={open} title={t('platform.addDevice')} onClose={close}>
        {add.isSuccess ? (
          <div className="stack">
            <p role="status">{t('platform.tokenOnce', { id: add.data.device.device_id })}</p>
            <label>
              {t('platform.deviceToken')}
              <input readOnly value={add.data.device_token} onFocus={(e) => e.currentTarget.select()} className="token" />
            </label>
            <div className="actions">
              <button type="button" onClick={close} autoFocus>
                {t('app.close')}
              </button>
            </div>
          </div>
        ) : (
          <form onSubmit={submit} className="stack">
            <label>
              {t('platform.deviceId')}
              <input name="device_id" required maxLength={64} pattern="[A-Za-z0-9._:\-]{1,64}" autoComplete="off" autoFocus />
            </label>
            <label>
              {t('platform.model')}
              <input name="model" required maxLength={64} autoComplete="off" />
            </label>
            {add.error ? <Alert>{add.error.message}</Alert> : null}
            <div className="actions">
              <button type="submit" disabled={add.isPending}>
                {t('platform.add')}
              </button>
              <button type="button" className="secondary" onClick={close}>
                {t('app.cancel')}
              </button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  )
}
