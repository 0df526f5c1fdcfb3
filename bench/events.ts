/**
 * `npm run bench -- events [--streams 200] [--rounds 100]`: how long a device link closing takes
 * to reach every open event stream as a `device` event, with 1 stream (the baseline) and with
 * `--streams` administrators' streams open, and the server's RSS per open stream.
 */
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import WebSocket from 'ws'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { openStorage } from '../src/storage/storage.js'
import { option } from './bench-options.js'

/** A minimal SSE reader: calls `onClosed(deviceId)` for each `device` event with reason closed. */
function openStream(base: string, token: string, onClosed: (deviceId: string) => void): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}/api/v1/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        let buffer = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buffer += chunk
          let end: number
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const data = /^data: (.*)$/m.exec(block)?.[1]
            if (data && block.includes('event: device\n')) {
              const parsed = JSON.parse(data) as { device_id: string; reason: string }
              if (parsed.reason === 'closed') onClosed(parsed.device_id)
            }
          }
        })
        resolve(res)
      })
      .on('error', reject)
  })
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!

export default async function events(args: string[]): Promise<void> {
  const streams = option(args, 'streams', 200, { integer: true })
  const rounds = option(args, 'rounds', 100, { integer: true })
  const users = { admin: { password: 'bench-admin-pw', role: 'admin' } }
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', PLATFORM_CONSOLE_TOKEN: 'bench-console-token', CLOUD_AUTH_USERS: JSON.stringify(users) })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const app = await buildApp(config, { storage, logger: false, events: { maxStreamsPerUser: streams + 1 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'bench-admin-pw' } })
  const token = (login.json() as { token: string }).token
  const opened: http.IncomingMessage[] = []
  try {
    for (const count of [1, streams]) {
      let waiting: { id: string; left: number; done: () => void } | undefined
      const onClosed = (id: string) => {
        if (waiting?.id === id && --waiting.left === 0) waiting.done()
      }
      const rssBefore = process.memoryUsage().rss
      for (let i = 0; i < count; i++) opened.push(await openStream(base, token, onClosed))
      const rssAfter = process.memoryUsage().rss
      const latencies: number[] = []
      for (let round = 0; round < rounds; round++) {
        const id = `bench-${count}-${round}`
        const socket = new WebSocket(`${base.replace('http', 'ws')}/api/v1/device-link`)
        await once(socket, 'open')
        socket.send(JSON.stringify({ type: 'register', device_id: id, key: 'bench-device-key-0123456789', hostname: id, version: '1.0.0' }))
        await once(socket, 'message')
        const arrived = new Promise<void>((done) => (waiting = { id, left: count, done }))
        const started = performance.now()
        socket.close()
        await arrived
        latencies.push(performance.now() - started)
      }
      console.log(
        `${count} stream(s): link close → device event on every stream p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms` +
          (count > 1 ? `; RSS +${((rssAfter - rssBefore) / count / 1024).toFixed(1)} KB per stream (client side included)` : ''),
      )
      for (const res of opened.splice(0)) res.destroy()
    }
  } finally {
    await app.close()
  }
}
