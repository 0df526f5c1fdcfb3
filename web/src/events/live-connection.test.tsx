import { QueryClient, QueryClientProvider, QueryObserver } from '@tanstack/react-query'
import { render, screen } from '@testing-library/react'
import { act } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LiveStatusBadge } from '../components/layout/live-status'
import { changeLanguage, setupI18n } from '../i18n/i18n'
import { sessionStore } from '../session/session'
import type { EventStreamHandlers } from './event-stream'
import { LiveConnection } from './live-connection'
import { useEventStream } from './use-event-stream'

/** A stand-in for openEventStream: the test opens, drops and feeds each stream. */
function fakeStreams() {
  const streams: { token: string; handlers: EventStreamHandlers; stopped: boolean }[] = []
  const open = (token: string, handlers: EventStreamHandlers) => {
    const stream = { token, handlers, stopped: false }
    streams.push(stream)
    return () => void (stream.stopped = true)
  }
  return { streams, open }
}

/** A client with one live query whose fetches the test counts. */
function clientWithLiveQuery() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } })
  let fetches = 0
  const observer = new QueryObserver(client, { queryKey: ['platform', 'summary'], queryFn: async () => ++fetches })
  const unsubscribe = observer.subscribe(() => {})
  return { client, fetches: () => (client.isFetching() > 0 ? -1 : fetches), unsubscribe }
}

describe('live connection', () => {
  afterEach(() => vi.useRealTimers())

  it('reads reconnecting until the stream opens, live while open, reconnecting when it drops', () => {
    const { client } = clientWithLiveQuery()
    const { streams, open } = fakeStreams()
    const connection = new LiveConnection(client, () => {}, open)
    expect(connection.getSnapshot()).toBe('reconnecting')
    connection.connect('t1')
    streams[0]!.handlers.onOpen()
    expect(connection.getSnapshot()).toBe('live')
    streams[0]!.handlers.onDown?.(new Error('gone'))
    expect(connection.getSnapshot()).toBe('reconnecting')
  })

  it('refetches the live queries once after a reconnect, not after the first open', async () => {
    const { client, fetches } = clientWithLiveQuery()
    await vi.waitFor(() => expect(fetches()).toBe(1))
    const { streams, open } = fakeStreams()
    const connection = new LiveConnection(client, () => {}, open)
    connection.connect('t1')
    streams[0]!.handlers.onOpen()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fetches()).toBe(1)
    streams[0]!.handlers.onDown?.(new Error('gone'))
    streams[0]!.handlers.onOpen()
    await vi.waitFor(() => expect(fetches()).toBe(2))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fetches()).toBe(2)
  })

  it('a token refresh restarts the stream with the new token and refetches what the gap may have hidden', async () => {
    const { client, fetches } = clientWithLiveQuery()
    await vi.waitFor(() => expect(fetches()).toBe(1))
    const { streams, open } = fakeStreams()
    const connection = new LiveConnection(client, () => {}, open)
    connection.connect('t1')
    streams[0]!.handlers.onOpen()
    connection.connect('t2')
    expect(streams.map((s) => [s.token, s.stopped])).toEqual([['t1', true], ['t2', false]])
    streams[1]!.handlers.onOpen()
    await vi.waitFor(() => expect(fetches()).toBe(2))
    expect(connection.getSnapshot()).toBe('live')
  })

  it('after signing out, the next sign-in’s first open refetches nothing', async () => {
    const { client, fetches } = clientWithLiveQuery()
    await vi.waitFor(() => expect(fetches()).toBe(1))
    const { streams, open } = fakeStreams()
    const connection = new LiveConnection(client, () => {}, open)
    connection.connect('t1')
    streams[0]!.handlers.onOpen()
    connection.forget()
    expect(streams[0]!.stopped).toBe(true)
    expect(connection.getSnapshot()).toBe('reconnecting')
    connection.connect('t2')
    streams[1]!.handlers.onOpen()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fetches()).toBe(1)
  })

  it('asks for a new token on 401', () => {
    const { client } = clientWithLiveQuery()
    const { streams, open } = fakeStreams()
    const refresh = vi.fn()
    const connection = new LiveConnection(client, refresh, open)
    connection.connect('t1')
    streams[0]!.handlers.onUnauthorized?.()
    expect(refresh).toHaveBeenCalledOnce()
    expect(connection.getSnapshot()).toBe('reconnecting')
  })
})

describe('the header’s live status', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    changeLanguage('en')
  })

  function Header() {
    useEventStream()
    return <LiveStatusBadge />
  }

  it('reads "Live" while the stream is open and "Reconnecting" while it is not, in English and Chinese', async () => {
    setupI18n('en')
    sessionStore.signIn({ token: 'tok', expires_in: 3600, user: { id: '1', username: 'root', display_name: 'Root', role: 'admin' } })
    let controller!: ReadableStreamDefaultController<Uint8Array>
    let calls = 0
    vi.stubGlobal('fetch', async () => {
      calls += 1
      if (calls > 1) throw new Error('offline')
      return new Response(new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) }), { status: 200 })
    })
    const client = new QueryClient()
    render(
      <QueryClientProvider client={client}>
        <Header />
      </QueryClientProvider>,
    )
    expect((await screen.findByRole('status')).textContent).toBe('Live')
    act(() => changeLanguage('zh-CN'))
    expect(screen.getByRole('status').textContent).toBe('实时')
    act(() => changeLanguage('en'))
    await act(async () => controller.close())
    await vi.waitFor(() => expect(screen.getByRole('status').textContent).toBe('Reconnecting'))
    act(() => changeLanguage('zh-CN'))
    expect(screen.getByRole('status').textContent).toBe('正在重新连接')
    sessionStore.signOut()
  })
})
