import { useTranslation } from 'react-i18next'
import type { UploadProgress } from './upload-release'

/** Progressbar "Upload progress": percent of the request body sent (0 until the browser knows the total). */
export function UploadProgressBar({ progress }: { progress: UploadProgress }) {
  const { t } = useTranslation()
  const percent = progress.total > 0 ? Math.min(100, Math.round((progress.loaded / progress.total) * 100)) : 0
  return (
    <div
      role="progressbar"
      aria-label={t('firmware.uploadProgress')}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
      aria-valuetext={t('firmware.uploadPercent', { percent })}
      className="progress"
      style={{ marginTop: '0.5rem' }}
    >
      <div className="progress-bar" style={{ width: `${percent}%` }} />
    </div>
  )
}
