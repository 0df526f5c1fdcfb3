import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ApiError } from '../../../api/api-error'
import { firmwareKeys } from '../../../api/query-keys'
import { Alert, Notice } from '../../../components/ui/alert'
import { Region } from '../../../components/ui/region'
import { uploadRelease, type UploadProgress } from './upload-release'
import { UploadProgressBar } from './upload-progress-bar'

/** Image + manifest → POST releases, with its progress while it runs; a 422 lists each of its reasons. */
export function UploadForm() {
  const { t } = useTranslation()
  const client = useQueryClient()
  const imageId = useId()
  const manifestId = useId()
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const upload = useMutation({
    mutationFn: (form: FormData) => uploadRelease(form, setProgress),
    onMutate: () => setProgress({ loaded: 0, total: 0 }),
    onSettled: () => setProgress(null),
    onSuccess: () => client.invalidateQueries({ queryKey: firmwareKeys.all }),
  })
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const element = e.currentTarget
    const fields = new FormData(element)
    const form = new FormData()
    form.append('image', fields.get('image') as File)
    form.append('manifest', fields.get('manifest') as File)
    upload.mutate(form, { onSuccess: () => element.reset() })
  }
  const error = upload.error
  const reasons = error instanceof ApiError ? error.reasons : []
  return (
    <Region label={t('firmware.uploadTitle')}>
      <form onSubmit={submit} className="actions" style={{ alignItems: 'flex-end', flexWrap: 'wrap' }}>
        <label htmlFor={imageId}>{t('firmware.image')}</label>
        <input id={imageId} name="image" type="file" accept=".bin,application/octet-stream" required />
        <label htmlFor={manifestId}>{t('firmware.manifest')}</label>
        <input id={manifestId} name="manifest" type="file" accept=".json,application/json" required />
        <button type="submit" disabled={upload.isPending}>
          {t('firmware.upload')}
        </button>
      </form>
      {upload.isPending && progress ? <UploadProgressBar progress={progress} /> : null}
      {error ? (
        <Alert title={reasons.length > 0 ? t('firmware.rejected') : undefined}>
          {reasons.length > 0 ? (
            <ul>
              {reasons.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          ) : (
            <p>{error.message}</p>
          )}
        </Alert>
      ) : null}
      {upload.isSuccess ? <Notice>{t('firmware.uploaded', { id: upload.data.release_id })}</Notice> : null}
    </Region>
  )
}
