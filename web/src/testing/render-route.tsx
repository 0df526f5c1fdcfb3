import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { render } from '@testing-library/react'
import type { ReactElement } from 'react'
import { createMemoryRouter, RouterProvider, useLocation } from 'react-router'
import { setupI18n } from '../i18n/i18n'

/** Where the router is now, as text, for tests that follow a navigation. */
function LocationProbe() {
  return <output aria-label="location">{useLocation().pathname}</output>
}

/**
 * Renders `element` as the route `path` opened at `at`, inside a fresh query client (no retries)
 * with English strings; any other path renders only a location probe.
 */
export function renderRoute(path: string, element: ReactElement, at: string) {
  setupI18n('en')
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } })
  const router = createMemoryRouter(
    [
      { path, element },
      { path: '*', element: <LocationProbe /> },
    ],
    { initialEntries: [at] },
  )
  return { client, router, ...render(<QueryClientProvider client={client}><RouterProvider router={router} /></QueryClientProvider>) }
}
