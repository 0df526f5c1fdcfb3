import { useQueryClient, type QueryClient } from '@tanstack/react-query'
import { useEffect, useSyncExternalStore } from 'react'
import { sessionStore, useSession } from '../session/session'
import { LiveConnection, type LiveStatus } from './live-connection'

const connections = new WeakMap<QueryClient, LiveConnection>()

/** The tab's one connection, per query client (the app has one; each test its own). */
function connectionOf(client: QueryClient): LiveConnection {
  let connection = connections.get(client)
  if (!connection) {
    connection = new LiveConnection(client, () => void sessionStore.refreshNow())
    connections.set(client, connection)
  }
  return connection
}

/** One event stream per tab while signed in, restarted with each new token. */
export function useEventStream(): void {
  const client = useQueryClient()
  const token = useSession()?.token
  // An external system (the stream) kept in sync with the token: what effects are for.
  useEffect(() => {
    const connection = connectionOf(client)
    if (!token) return connection.forget()
    connection.connect(token)
    return () => connection.disconnect()
  }, [client, token])
}

/** "live" while the stream is open, else "reconnecting". */
export function useLiveStatus(): LiveStatus {
  const connection = connectionOf(useQueryClient())
  return useSyncExternalStore(connection.subscribe, connection.getSnapshot)
}
