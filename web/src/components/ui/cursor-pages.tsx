import { useState, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'

/**
 * Forward/back paging over an API cursor (`after` → `next_after`): remembers the cursors of
 * the pages visited, so a fleet of thousands stays one page of DOM at a time.
 * `pager(next)` is the Previous / Page n / Next bar, or null while everything fits on one page.
 */
export function useCursorPages(): { after: string | null; pager: (next: string | undefined) => ReactNode } {
  const { t } = useTranslation()
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const pager = (next: string | undefined) =>
    cursors.length > 1 || next ? (
      <div className="paging">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          {t('app.previousPage')}
        </button>
        <span>{t('app.page', { page: cursors.length })}</span>
        <button type="button" disabled={!next} onClick={() => next && setCursors((c) => [...c, next])}>
          {t('app.nextPage')}
        </button>
      </div>
    ) : null
  return { after: cursors[cursors.length - 1]!, pager }
}
