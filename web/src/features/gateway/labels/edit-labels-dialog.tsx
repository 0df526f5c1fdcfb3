import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import type { Labels } from '../../../api/types'
import { Notice } from '../../../components/ui/alert'
import { Dialog } from '../../../components/ui/dialog'
import { LabelsForm } from './labels-form'
import { useSaveLabels } from './save-labels'

/** "Edit labels" (admins): a dialog of the machine's labels; "Save" replaces them all (PUT). */
export function EditLabelsButton({ id, labels }: { id: string; labels: Labels }) {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  const save = useSaveLabels(id)
  return (
    <div className="edit-labels">
      {save.isSuccess && !open ? <Notice>{t('labels.saved', { id })}</Notice> : null}
      <button
        type="button"
        className="secondary"
        onClick={() => {
          save.reset()
          setOpen(true)
        }}
      >
        {t('labels.edit')}
      </button>
      <Dialog open={open} title={t('labels.edit')} onClose={() => setOpen(false)} className="labels-dialog">
        <p>{t('labels.editHelp', { id })}</p>
        <LabelsForm
          labels={labels}
          saving={save.isPending}
          error={save.error}
          onSave={(next) => save.mutate(next, { onSuccess: () => setOpen(false) })}
          onCancel={() => setOpen(false)}
        />
      </Dialog>
    </div>
  )
}
