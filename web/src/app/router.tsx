import { createBrowserRouter, Navigate } from 'react-router'
import { Shell } from '../components/layout/shell'
import { LoginPage } from '../features/auth/login-page'
import { MachinesPage } from '../features/gateway/machines/machines-page'
import { NotFoundPage } from './not-found-page'
import { RequireAdmin, RequireSession } from './require-session'

/** Every route of contract §12. Pages other than login and machines load on demand. */
export const router = createBrowserRouter([
  { path: '/login', Component: LoginPage },
  {
    Component: RequireSession,
    children: [
      {
        Component: Shell,
        children: [
          { index: true, element: <Navigate to="/machines" replace /> },
          { path: 'machines', Component: MachinesPage },
          { path: 'machines/:id', lazy: async () => ({ Component: (await import('../features/gateway/machine/machine-page')).MachinePage }) },
          {
            Component: RequireAdmin,
            children: [
              { path: 'firmware', lazy: async () => ({ Component: (await import('../features/gateway/firmware/firmware-page')).FirmwarePage }) },
              {
                path: 'firmware/rollouts/:id',
                lazy: async () => ({ Component: (await import('../features/gateway/firmware/rollouts/rollout-page')).RolloutPage }),
              },
              { path: 'audit', lazy: async () => ({ Component: (await import('../features/gateway/audit/audit-page')).AuditPage }) },
              { path: 'platform/*', lazy: async () => ({ Component: (await import('../features/platform/platform-routes')).PlatformRoutes }) },
            ],
          },
          { path: '*', Component: NotFoundPage },
        ],
      },
    ],
  },
])
