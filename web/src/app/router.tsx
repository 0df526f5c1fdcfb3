import { createBrowserRouter, Navigate, type RouteObject } from 'react-router'
import { Shell } from '../components/layout/shell'
import { LoginPage } from '../features/auth/login-page'
import { MachinesPage } from '../features/gateway/machines/machines-page'
import { NotFoundPage } from './not-found-page'
import type { TitleHandle } from './page-title'
import { RequireAdmin, RequireSession } from './require-session'
import { RootLayout } from './root-layout'
import { RouteErrorPage } from './route-error-page'

const title = (fn: TitleHandle['title']): { handle: TitleHandle } => ({ handle: { title: fn } })

/** The platform's own routes (platform-routes.tsx) are matched there: its title follows the rest of the path. */
function platformTitle(t: Parameters<TitleHandle['title']>[0], rest: string | undefined): string[] {
  const [section, id] = (rest ?? '').split('/')
  if (section === 'devices' && id) return [id, t('platform.devices'), t('nav.platform')]
  if (section === 'devices') return [t('platform.devices'), t('nav.platform')]
  if (section === 'logs') return [t('platform.operationLog'), t('nav.platform')]
  return [t('nav.platform')]
}

/**
 * Every route of contract §12, each with its own title and an error boundary (a failed load, or a
 * lazy chunk gone after a deploy, shows a translated error with Reload). Pages other than login and
 * machines load on demand.
 */
export const routes: RouteObject[] = [
  {
    Component: RootLayout,
    ErrorBoundary: RouteErrorPage,
    children: [
      { path: '/login', Component: LoginPage, ErrorBoundary: RouteErrorPage, ...title((t) => [t('login.signIn')]) },
      {
        Component: RequireSession,
        ErrorBoundary: RouteErrorPage,
        children: [
          {
            Component: Shell,
            ErrorBoundary: RouteErrorPage,
            children: [
              {
                // Errors of a page show inside the shell, navigation still at hand.
                ErrorBoundary: RouteErrorPage,
                children: [
                  { index: true, element: <Navigate to="/machines" replace /> },
                  { path: 'machines', Component: MachinesPage, ...title((t) => [t('nav.machines')]) },
                  {
                    path: 'machines/:id',
                    lazy: async () => ({ Component: (await import('../features/gateway/machine/machine-page')).MachinePage }),
                    ...title((t, p) => [p.id ?? '', t('nav.machines')]),
                  },
                  {
                    path: 'production',
                    lazy: async () => ({ Component: (await import('../features/gateway/production/production-page')).ProductionPage }),
                    ...title((t) => [t('production.title')]),
                  },
                  {
                    Component: RequireAdmin,
                    children: [
                      {
                        path: 'firmware',
                        lazy: async () => ({ Component: (await import('../features/gateway/firmware/firmware-page')).FirmwarePage }),
                        ...title((t) => [t('nav.firmware')]),
                      },
                      {
                        path: 'firmware/rollouts/:id',
                        lazy: async () => ({ Component: (await import('../features/gateway/firmware/rollouts/rollout-page')).RolloutPage }),
                        ...title((t, p) => [p.id ?? '', t('rollouts.rollouts'), t('nav.firmware')]),
                      },
                      {
                        path: 'audit',
                        lazy: async () => ({ Component: (await import('../features/gateway/audit/audit-page')).AuditPage }),
                        ...title((t) => [t('audit.title')]),
                      },
                      {
                        path: 'platform/*',
                        lazy: async () => ({ Component: (await import('../features/platform/platform-routes')).PlatformRoutes }),
                        ...title((t, p) => platformTitle(t, p['*'])),
                      },
                    ],
                  },
                  { path: '*', Component: NotFoundPage, ...title((t) => [t('app.notFound')]) },
                ],
              },
            ],
          },
        ],
      },
    ],
  },
]

export const router = createBrowserRouter(routes)
