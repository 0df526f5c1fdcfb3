import type { TFunction } from 'i18next'
import { useEffect } from 'react'
import { useTranslation } from 'react-i18next'
import { useMatches, type Params } from 'react-router'

/** A route's `handle`: the parts of its page title, most specific first (the console's name follows). */
export interface TitleHandle {
  title: (t: TFunction, params: Params) => string[]
}

const hasTitle = (handle: unknown): handle is TitleHandle => typeof (handle as TitleHandle | undefined)?.title === 'function'

/** "pnp-01 · Machines · fleetgate": the deepest matched route's title, translated. */
export function usePageTitle(): string {
  const { t } = useTranslation()
  const match = useMatches().findLast((m) => hasTitle(m.handle))
  const parts = match ? (match.handle as TitleHandle).title(t, match.params) : []
  return [...parts, t('app.name')].join(' · ')
}

/** Keeps `document.title` on the page shown (the document is outside React: an effect). */
export function DocumentTitle() {
  const title = usePageTitle()
  useEffect(() => {
    document.title = title
  }, [title])
  return null
}
