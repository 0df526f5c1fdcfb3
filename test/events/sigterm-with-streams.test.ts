import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { startServerProcess } from '../helpers/server-process.js'
import { SseClient } from './sse-client.js'

describe('fleetgate serve with open event streams', () => {
  it('finishes the open streams and exits 0 on SIGTERM (the force-exit after 10 s would exit 1)', async () => {
    const server = await startServerProcess({ DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'fg-events-')), 'data') })
    let streams: SseClient[] = []
    try {
      const login = await fetch(`${server.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'admin' }),
      })
      const { token } = (await login.json()) as { token: string }
      streams = await Promise.all([1, 2, 3].map(() => SseClient.open(`${server.url}/api/v1/events`, `Bearer ${token}`)))
      expect(streams.map((s) => s.status)).toEqual([200, 200, 200])
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
    expect(await Promise.all(streams.map((s) => s.ended))).toEqual(['finished', 'finished', 'finished'])
  })
})
