import { useQueryClient } from '@tanstack/react-query'
import { useEffect } from 'react'
import { sessionStore, useSession } from '../session/session'
import { openEventStream } from './event-stream'
import { routeEvent } from './event-router'

/** One event stream per tab while signed in; reconnects refetch live queries. */
export function useEventStream(): void {
  const client = useQueryClient()
  const token = useSession()?.token
  // An external system (the stream) kept in sync with the token: what effects are for.
  useEffect(() => {
    if (!token) return
    let first = true
    return openEventStream(token, {
      onEvent: (event) => routeEvent(client, event),
      onOpen: () => {
        if (!first) void client.invalidateQueries({ type: 'active' })
        first = false
      },
      onUnauthorized: () => void sessionStore.refreshNow(),
    })
  }, [client, token])
}
