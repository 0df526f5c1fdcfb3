import { useState } from 'react'
import { useTranslation } from 'react-i18next'

/** The first 12 hex digits of a SHA-256, the full value in the title and a button that copies it. */
export function ShaCell({ sha256, releaseId }: { sha256: string; releaseId: string }) {
  const { t } = useTranslation()
  const [copied, setCopied] = useState(false)
  const copy = () => {
    void navigator.clipboard?.writeText(sha256).then(() => {
      setCopied(true)
      setTimeout(() => setCopied(false), 2000)
    })
  }
  return (
    <span className="sha">
      <code title={sha256}>{sha256.slice(0, 12)}…</code>{' '}
      <button type="button" className="secondary copy-button" aria-label={t('firmware.copySha', { id: releaseId })} title={sha256} onClick={copy}>
        {copied ? t('firmware.copied') : t('firmware.copy')}
      </button>
    </span>
  )
}
