import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { useLocation, useSearchParams } from 'react-router'

interface TrailState {
  /** The cursors of the pages before this one, the first page's being null. */
  trail?: (string | null)[]
  /** The trail starts at a page opened cold (its number is not known). */
  cold?: boolean
}

/**
 * Forward/back paging over an API cursor (`after` → `next_after`) with the page's cursor in the
 * URL (`?after=…`), so a reload, a shared link or the browser's Back shows the same page. The
 * cursors of the pages before it ride in the history entry's state; a link opened cold does not
 * know them, so its "Previous page" goes to the first page.
 */
export function useUrlCursorPages(): { after: string | null; pager: (next: string | undefined) => ReactNode } {
  const { t } = useTranslation()
  const [params, setParams] = useSearchParams()
  const location = useLocation()
  const after = params.get('after') || null
  const state = location.state as TrailState | null
  const trail = state?.trail ?? []
  // A page is numbered when the first page is in its trail (it was reached by paging from it).
  const cold = after !== null && (state?.cold === true || trail.length === 0)
  const go = (cursor: string | null, nextTrail: (string | null)[], nextCold = false) =>
    setParams(
      (current) => {
        const next = new URLSearchParams(current)
        if (cursor === null) next.delete('after')
        else next.set('after', cursor)
        return next
      },
      { state: { trail: nextTrail, cold: nextCold } satisfies TrailState },
    )
  const previous = () => {
    if (trail.length > 0) go(trail[trail.length - 1]!, trail.slice(0, -1), cold && trail.length > 1)
    else go(null, [])
  }
  const pager = (next: string | undefined) =>
    after !== null || next ? (
      <div className="paging">
        <button type="button" disabled={after === null} onClick={previous}>
          {t('app.previousPage')}
        </button>
        <span>{cold ? t('paging.after', { id: after }) : t('app.page', { page: trail.length + 1 })}</span>
        <button type="button" disabled={!next} onClick={() => next && go(next, [...trail, after], cold)}>
          {t('app.nextPage')}
        </button>
      </div>
    ) : null
  return { after, pager }
}
