import { randomUUID } from 'node:crypto'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsRpc } from '../../src/link/bus/nats-rpc.js'
import { natsSuitesRunnable, TEST_NATS_URL } from '../helpers/nats.js'

const runnable = await natsSuitesRunnable({ needsPostgres: false })

describe.skipIf(!runnable)('NATS request-reply with large messages', () => {
  let nc: NatsConnection
  beforeAll(async () => {
    nc = await connect({ servers: TEST_NATS_URL })
  })
  afterAll(() => nc?.close())

  /** A server on a fresh subject; resolves each handled value or error. */
  function serve(rpc: NatsRpc) {
    const subject = `test.rpc.${randomUUID()}`
    const handled: unknown[] = []
    const errors: Error[] = []
    rpc.serve(subject, async (value) => (handled.push(value), { ok: true }), (err) => errors.push(err as Error))
    return { subject, handled, errors }
  }

  /** A hostile peer's chunk server: answers every fetch with `chunk`, counting fetches. */
  function chunkServer(chunk: Uint8Array) {
    const subject = `test.blob.${randomUUID()}`
    const fetches = { count: 0 }
    nc.subscribe(subject, { callback: (_err, msg) => (fetches.count++, msg.respond(chunk)) })
    return { subject, fetches }
  }

  it('carries a message larger than the server max_payload in chunks', async () => {
    const rpc = new NatsRpc(nc)
    const server = serve(rpc)
    const big = { blob: 'b'.repeat(3 * 1024 * 1024) }
    await expect(rpc.request(server.subject, big, 5000)).resolves.toEqual({ ok: true })
    expect(server.handled).toEqual([big])
  })

  it('refuses a message announced over the configured maximum without fetching a chunk', async () => {
    const server = serve(new NatsRpc(nc, 4 * 1024 * 1024))
    const blob = chunkServer(new Uint8Array(1))
    nc.publish(server.subject, Buffer.from(JSON.stringify({ $blob: { subject: blob.subject, size: 5 * 1024 * 1024, chunks: 80 } })))
    await expect.poll(() => server.errors.length).toBe(1)
    expect(server.errors[0]!.message).toMatch(/refused/)
    expect(blob.fetches.count).toBe(0)
    expect(server.handled).toEqual([])
  })

  it('refuses a chunk count that cannot fit the announced size, fetching nothing', async () => {
    const server = serve(new NatsRpc(nc))
    const blob = chunkServer(new Uint8Array(1))
    nc.publish(server.subject, Buffer.from(JSON.stringify({ $blob: { subject: blob.subject, size: 1024 * 1024, chunks: 1_000_000_000 } })))
    await expect.poll(() => server.errors.length).toBe(1)
    expect(blob.fetches.count).toBe(0)
  })

  it('stops fetching once a peer sends more bytes than it announced', async () => {
    const server = serve(new NatsRpc(nc))
    const blob = chunkServer(new Uint8Array(512 * 1024))
    nc.publish(server.subject, Buffer.from(JSON.stringify({ $blob: { subject: blob.subject, size: 200 * 1024, chunks: 3 } })))
    await expect.poll(() => server.errors.length).toBe(1)
    expect(server.errors[0]!.message).toMatch(/exceeds/)
    expect(blob.fetches.count).toBe(1)
  })
})
