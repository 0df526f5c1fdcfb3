import { useQueryClient } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { NavLink, Outlet } from 'react-router'
import { useEventStream } from '../../events/use-event-stream'

import { isAdmin, sessionStore, useSession } from '../../session/session'
import { LanguageSelect } from './language-select'
import { LiveStatusBadge } from './live-status'

/** The signed-in frame: navigation, Sign out, Language, and the page. */
export function Shell() {
  const { t } = useTranslation()
  const session = useSession()
  const client = useQueryClient()
  useEventStream()
  const admin = isAdmin(session)
  const signOut = () => {
    sessionStore.signOut()
    client.clear()
  }
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">{t('app.name')}</span>
        <nav aria-label={t('nav.main')}>
          <NavLink to="/machines">{t('nav.machines')}</NavLink>
          <NavLink to="/production">{t('nav.production')}</NavLink>
          {admin ? (
            <>
              <NavLink to="/firmware">{t('nav.firmware')}</NavLink>
              <NavLink to="/platform">{t('nav.platform')}</NavLink>
              <NavLink to="/audit">{t('nav.audit')}</NavLink>
            </>
          ) : null}
        </nav>
        <div className="account">
          <LiveStatusBadge />
          <span>{t('nav.signedInAs', { name: session?.user.display_name || session?.user.username })}</span>
          <LanguageSelect />
          <button type="button" onClick={signOut}>
            {t('nav.signOut')}
          </button>
        </div>
      </header>
      <main>
        <Outlet />
      </main>
    </div>
  )
}

