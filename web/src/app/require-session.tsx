import { useTranslation } from 'react-i18next'
import { Navigate, Outlet, useLocation } from 'react-router'
import { isAdmin, useSession } from '../session/session'

/** Signed out, every route but /login goes to /login (and back after signing in). */
export function RequireSession() {
  const session = useSession()
  const location = useLocation()
  if (!session) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />
  return <Outlet />
}

export function RequireAdmin() {
  const { t } = useTranslation()
  if (!isAdmin(useSession())) return <h1>{t('app.notFound')}</h1>
  return <Outlet />
}
