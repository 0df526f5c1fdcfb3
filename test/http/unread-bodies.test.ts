import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

const MiB = 1024 * 1024
const PARSE = '/api/v1/devices/pnp-big/orders/parse'

interface Exchange {
  /** Everything the server sent. */
  received: string
  /** A socket error the client saw (EPIPE, ECONNRESET), if any. */
  error?: string
}

/**
 * A raw client: writes the head, then (unless told to wait for an interim answer) `bodyBytes`
 * as fast as it can without waiting for the server, then half-closes and reads to the end.
 */
function exchange(port: number, head: string, bodyBytes: number, options: { chunked?: boolean; sendBody?: boolean } = {}): Promise<Exchange> {
  return new Promise((resolve) => {
    const result: Exchange = { received: '' }
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head)
      if (options.sendBody !== false) {
        const chunk = Buffer.alloc(64 * 1024, 0x61)
        for (let sent = 0; sent < bodyBytes; sent += chunk.length) {
          const part = chunk.subarray(0, Math.min(chunk.length, bodyBytes - sent))
          socket.write(options.chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part)
        }
        if (options.chunked) socket.write('0\r\n\r\n')
      }
      socket.end()
    })
    socket.on('data', (data) => (result.received += data.toString('latin1')))
    socket.on('error', (err) => (result.error = (err as NodeJS.ErrnoException).code ?? err.message))
    socket.on('close', () => resolve(result))
  })
}

describe.each(DIALECTS)('answers reach a client still sending its body on %s', (dialect) => {
  let t: TestApp
  let port: number
  let token: string
  const head = (lines: string[]) => [`POST ${PARSE} HTTP/1.1`, 'Host: test', 'Content-Type: application/json', `Authorization: ${token}`, ...lines, '', ''].join('\r\n')

  beforeAll(async () => {
    t = await startTestApp(dialect)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as AddressInfo).port
    token = await loginAs(t.app, 'admin', 'admin')
  })
  afterAll(() => t.close())

  it('gets 413, never a reset, when it streams 17 MiB with Content-Length as fast as it can (20 times)', async () => {
    for (let i = 0; i < 20; i++) {
      const { received, error } = await exchange(port, head([`Content-Length: ${17 * MiB}`]), 17 * MiB)
      expect(error, `try ${i}`).toBeUndefined()
      expect(received.split('\r\n')[0], `try ${i}`).toBe('HTTP/1.1 413 Payload Too Large')
      expect(received).toContain('"error":"payload_too_large"')
    }
  })

  it('gets 413, never a reset, when it asks for Connection: close and streams 17 MiB at once (20 times)', async () => {
    for (let i = 0; i < 20; i++) {
      const { received, error } = await exchange(port, head([`Content-Length: ${17 * MiB}`, 'Connection: close']), 17 * MiB)
      expect(error, `try ${i}`).toBeUndefined()
      expect(received.split('\r\n')[0], `try ${i}`).toBe('HTTP/1.1 413 Payload Too Large')
      expect(received).toContain('"error":"payload_too_large"')
    }
  })

  it("reaches Node's own client with agent: false (Connection: close) writing 17 MiB at once, as a 413 (20 times)", async () => {
    const send = () =>
      new Promise<number | string>((resolve) => {
        const req = httpRequest(
          { port, host: '127.0.0.1', method: 'POST', path: PARSE, agent: false, headers: { 'content-type': 'application/json', authorization: token, 'content-length': 17 * MiB } },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.statusCode ?? 0))
          },
        )
        req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message))
        req.end(Buffer.alloc(17 * MiB, 0x61))
      })
    for (let i = 0; i < 20; i++) expect(await send(), `try ${i}`).toBe(413)
  })

  it('gets 413 with Connection: close from an HTTP/1.0 client streaming its body', async () => {
    const old = [`POST ${PARSE} HTTP/1.0`, 'Host: test', 'Content-Type: application/json', `Authorization: ${token}`, `Content-Length: ${17 * MiB}`, '', ''].join('\r\n')
    for (let i = 0; i < 5; i++) {
      const { received, error } = await exchange(port, old, 17 * MiB)
      expect(error, `try ${i}`).toBeUndefined()
      expect(received.split('\r\n')[0], `try ${i}`).toMatch(/^HTTP\/1\.[01] 413 Payload Too Large$/)
    }
  })

  it('gets 413, never a reset, when it streams 17 MiB chunked (no Content-Length)', async () => {
    for (let i = 0; i < 5; i++) {
      const { received, error } = await exchange(port, head(['Transfer-Encoding: chunked']), 17 * MiB, { chunked: true })
      expect(error, `try ${i}`).toBeUndefined()
      expect(received.split('\r\n')[0], `try ${i}`).toBe('HTTP/1.1 413 Payload Too Large')
    }
  })

  it('gets the 401 of a request without credentials, never a reset, while streaming its body', async () => {
    const anonymous = [`POST ${PARSE} HTTP/1.1`, 'Host: test', 'Content-Type: application/json', `Content-Length: ${8 * MiB}`, '', ''].join('\r\n')
    for (let i = 0; i < 5; i++) {
      const { received, error } = await exchange(port, anonymous, 8 * MiB)
      expect(error, `try ${i}`).toBeUndefined()
      expect(received.split('\r\n')[0], `try ${i}`).toBe('HTTP/1.1 401 Unauthorized')
    }
  })

  it('answers 413 instead of 100 Continue when the declared Content-Length is over the limit', async () => {
    const { received, error } = await exchange(port, head([`Content-Length: ${17 * MiB}`, 'Expect: 100-continue']), 0, { sendBody: false })
    expect(error).toBeUndefined()
    expect(received).not.toContain('100 Continue')
    expect(received.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large')
  })

  it('still answers 100 Continue to a body within the limit', async () => {
    const { received } = await exchange(port, head([`Content-Length: 2`, 'Expect: 100-continue']), 0, { sendBody: false })
    expect(received.split('\r\n')[0]).toBe('HTTP/1.1 100 Continue')
  })
})
