import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { RouterProvider } from 'react-router'
import { sessionStore } from '../session/session'
import { clearCacheOnSignOut } from './clear-cache-on-sign-out'
import { router } from './router'

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { staleTime: 5_000, retry: (count, error) => count < 2 && (error as { status?: number }).status === undefined },
  },
})

clearCacheOnSignOut(sessionStore, queryClient)

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  )
}
