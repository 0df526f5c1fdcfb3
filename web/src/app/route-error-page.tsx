import { useTranslation } from 'react-i18next'
import { isRouteErrorResponse, useRouteError } from 'react-router'
import { NotFoundPage } from './not-found-page'

/** Browsers' words for a module that could not be fetched (Chromium, Firefox, Safari) and Vite's for its CSS. */
const CHUNK_FAILURE = /dynamically imported module|Importing a module script failed|Unable to preload CSS/i

/** A lazy chunk that is gone (a deploy removed the old hashed files) or could not be fetched. */
export const isChunkLoadError = (error: unknown): boolean => error instanceof Error && CHUNK_FAILURE.test(error.message)

/**
 * Every route's error boundary: a page that failed to load or render shows a translated error and
 * a Reload button (a reload fetches the current index.html and its chunks), never a blank page.
 */
export function RouteErrorPage() {
  const { t } = useTranslation()
  const error = useRouteError()
  if (isRouteErrorResponse(error) && error.status === 404) return <NotFoundPage />
  const chunk = isChunkLoadError(error)
  const detail = error instanceof Error ? error.message : isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : undefined
  return (
    <section className="page-error" aria-labelledby="page-error-title">
      <h1 id="page-error-title">{t('errors.title')}</h1>
      <div role="alert" className="alert">
        <p>{chunk ? t('errors.chunkGone') : t('errors.pageFailed')}</p>
        {detail ? <p className="hint">{t('errors.detail', { message: detail })}</p> : null}
      </div>
      <p>
        <button type="button" onClick={() => window.location.reload()}>
          {t('errors.reload')}
        </button>
      </p>
    </section>
  )
}
