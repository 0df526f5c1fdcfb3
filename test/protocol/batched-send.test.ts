import { once } from 'node:events'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket, { WebSocketServer } from 'ws'
import { sendBatched } from '@fleetgate/device-agent/protocol'

/** Counts the writes a socket hands to the operating system (one `_write` or `_writev` each). */
function countWrites(socket: Socket): { readonly count: number } {
  const counter = { count: 0 }
  const stream = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>
  for (const method of ['_write', '_writev'] as const) {
    const original = stream[method].bind(socket)
    stream[method] = (...args: unknown[]) => {
      counter.count++
      original(...args)
    }
  }
  return counter
}

interface Pair {
  server: WebSocket
  serverWire: Socket
  client: WebSocket
  clientWire: Socket
}

const servers: WebSocketServer[] = []
afterEach(async () => {
  for (const wss of servers.splice(0)) {
    for (const ws of wss.clients) ws.terminate()
    await new Promise((resolve) => wss.close(resolve))
  }
})

/** A real WebSocket connection over loopback, with each end's public socket. */
async function connect(): Promise<Pair> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  servers.push(wss)
  await once(wss, 'listening')
  const accepted = once(wss, 'connection') as Promise<[WebSocket, { socket: Socket }]>
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`)
  const upgraded = once(client, 'upgrade') as Promise<[{ socket: Socket }]>
  const opened = once(client, 'open')
  const [[response]] = await Promise.all([upgraded, opened])
  const [server, request] = await accepted
  return { server, serverWire: request.socket, client, clientWire: response.socket }
}

function receive(ws: WebSocket, n: number): Promise<string[]> {
  const got: string[] = []
  return new Promise((resolve) =>
    ws.on('message', (data) => {
      got.push(data.toString())
      if (got.length === n) resolve(got)
    }),
  )
}

const FRAMES = Array.from({ length: 50 }, (_, i) => JSON.stringify({ type: 'heartbeat', status: { i } }))

describe('sendBatched', () => {
  it('sends the frames of one turn in one write from the server side (the upgrade request socket)', async () => {
    const { server, serverWire, client } = await connect()
    const writes = countWrites(serverWire)
    const arrived = receive(client, FRAMES.length)
    const sent = Promise.all(FRAMES.map((text) => new Promise<void>((resolve, reject) => sendBatched(server, serverWire, text, (err) => (err ? reject(err) : resolve())))))
    await sent
    expect(await arrived).toEqual(FRAMES)
    expect(writes.count).toBe(1)
  })

  it('sends the frames of one turn in one write from the client side (the upgrade response socket)', async () => {
    const { server, client, clientWire } = await connect()
    const writes = countWrites(clientWire)
    const arrived = receive(server, FRAMES.length)
    for (const text of FRAMES) sendBatched(client, clientWire, text, () => undefined)
    expect(await arrived).toEqual(FRAMES)
    expect(writes.count).toBe(1)
  })

  it('takes one write per turn: frames of the next turn leave in a second write', async () => {
    const { server, serverWire, client } = await connect()
    const writes = countWrites(serverWire)
    const arrived = receive(client, 20)
    for (const text of FRAMES.slice(0, 10)) sendBatched(server, serverWire, text, () => undefined)
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    for (const text of FRAMES.slice(10, 20)) sendBatched(server, serverWire, text, () => undefined)
    expect(await arrived).toEqual(FRAMES.slice(0, 20))
    expect(writes.count).toBe(2)
  })

  it('is measurable: the same frames sent without batching take more than one write', async () => {
    const { server, serverWire, client } = await connect()
    const writes = countWrites(serverWire)
    const arrived = receive(client, FRAMES.length)
    for (const text of FRAMES) server.send(text)
    expect(await arrived).toEqual(FRAMES)
    expect(writes.count).toBeGreaterThan(1)
  })
})
