import { render, screen, waitFor } from '@testing-library/react'
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router'
import { describe, expect, it } from 'vitest'
import { setupI18n } from '../i18n/i18n'
import type { TitleHandle } from './page-title'
import { RootLayout } from './root-layout'
import { RouteErrorPage } from './route-error-page'
import { routes } from './router'

const open = (routeList: RouteObject[], at: string) => render(<RouterProvider router={createMemoryRouter(routeList, { initialEntries: [at] })} />)

describe('page-level rules of the router', () => {
  it('gives every page route an error boundary and a title', () => {
    const walk = (list: RouteObject[], inBoundary: boolean): string[] =>
      list.flatMap((r) => {
        const covered = inBoundary || Boolean(r.ErrorBoundary)
        const own = r.path !== undefined && (!covered || !(r.handle as TitleHandle | undefined)?.title) ? [r.path] : []
        return [...own, ...walk(r.children ?? [], covered)]
      })
    expect(walk(routes, false)).toEqual([])
  })

  it('shows a lazy chunk that failed to load as a translated error with Reload, and titles the page', async () => {
    setupI18n('zh-CN')
    const failing: RouteObject[] = [
      {
        Component: RootLayout,
        ErrorBoundary: RouteErrorPage,
        children: [
          {
            ErrorBoundary: RouteErrorPage,
            children: [
              {
                path: 'machines/:id',
                handle: { title: (t, p) => [p.id ?? '', t('nav.machines')] } satisfies TitleHandle,
                lazy: () => Promise.reject(new TypeError('Failed to fetch dynamically imported module: /assets/machine-page-abc.js')),
              },
            ],
          },
        ],
      },
    ]
    open(failing, '/machines/pnp-01')
    expect((await screen.findByRole('alert')).textContent).toContain('控制台可能在您打开后已更新')
    screen.getByRole('button', { name: '重新加载' })
    // The title is set by an effect, which may commit after the alert is on screen (a CI run saw it empty).
    await waitFor(() => expect(document.title).toBe('pnp-01 · 机器 · fleetgate'))
  })
})
