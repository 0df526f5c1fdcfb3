import { connect, type Socket } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { acceptsConnections, killIfRunning, startServerProcess, type ServerProcess } from '../helpers/server-process.js'

/** Resolves with the next complete HTTP answer read on `socket` (head and the JSON body it announces). */
function nextAnswer(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed || socket.readyState !== 'open') return reject(new Error('the server closed the connection'))
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN)
      if (end >= 0 && text.length >= end + 4 + length) {
        socket.off('data', onData)
        resolve(text)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => reject(new Error(`closed before an answer (read: ${JSON.stringify(text.slice(0, 80))})`)))
  })
}

/**
 * SIGTERM behind a proxy (§13 rolling restart): an idle keep-alive connection is not closed under
 * its client the moment the server stops listening. nginx may be sending a POST on it right then,
 * and never resends a POST: that request would get nginx's 503.
 */
describe('a stopping server and the idle keep-alive connections of its clients', () => {
  let server: ServerProcess | undefined
  afterAll(async () => {
    await killIfRunning(server)
  })

  it('stops accepting connections, still answers a request sent on an idle one (with Connection: close), then exits 0', { timeout: 30_000 }, async () => {
    server = await startServerProcess({ DATABASE_URL: 'sqlite::memory:' })
    const port = Number(new URL(server.url).port)
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    // Many requests on one connection: the server watches it once (no listener piling up per request).
    for (let i = 0; i < 15; i++) {
      socket.write('GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n')
      expect((await nextAnswer(socket)).split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
    }

    server.child.kill('SIGTERM')
    await expect.poll(() => acceptsConnections(port), { timeout: 5000, interval: 20 }).toBe(false)
    const answer = nextAnswer(socket)
    socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')
    const text = await answer
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
    expect(text.toLowerCase()).toContain('connection: close')
    expect(await server.exited).toBe(0)
    expect(server.stderr()).not.toContain('MaxListenersExceededWarning')
  })
})
