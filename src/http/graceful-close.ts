import { Server as NetServer, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { delay } from '../lib/time.js'
import type { ShutdownDrain } from './shutdown-drain.js'

export interface GracefulCloseOptions {
  /**
   * How long a closing server leaves idle keep-alive connections to their clients before closing
   * them itself; 0 closes them at once (`serve` gives 3 s: nginx's upstream `keepalive_timeout` is
   * 2 s, and the server's `Keep-Alive: timeout=5` hint makes other clients close theirs in about 3 s).
   */
  keepAliveDrainMs?: number
  /**
   * The drain that ran before the close (SIGTERM, `serve`). When it ended with every health checker
   * told, the load balancer has stopped sending here: idle connections are closed at once.
   */
  drain?: ShutdownDrain
}

/**
 * How the server closes (SIGTERM, contract §1) behind a load balancer, so that a rolling restart
 * (§13) costs clients nothing:
 * - The listening socket closes first, before the device links are drained (the device link's
 *   own `preClose`, up to its grace period): new connections are refused, which nginx
 *   (`proxy_next_upstream error`) passes on to another instance at once, a POST included since
 *   nothing of it was sent, and so are the machines linking again after their 1012.
 * - A request that still arrives on a keep-alive connection opened before is served as usual
 *   (Fastify's default would answer it with a 503 of its own that nginx does not retry:
 *   `return503OnClosing: false` in `app.ts`).
 * - From then on every answer carries `Connection: close`, one already under way included, so
 *   each connection ends after its answer.
 * - Idle keep-alive connections are not closed under their client: closing one at the instant
 *   nginx sends a POST on it makes nginx answer 503 (it never resends a POST). With
 *   `keepAliveDrainMs`, listening stops through `net.Server#close` (the base class's public
 *   method: `http.Server#close` also closes idle connections at once, Node ≥ 19), and the idle
 *   ones are left to their clients, which use one once more (answered with `Connection: close`)
 *   or close it at their keep-alive time-out, for at most `keepAliveDrainMs`.
 * - Unless a drain (`ShutdownDrain`, run before `close`) ended with the load balancer's health
 *   checks told: it sends nothing here any more, so idle connections are closed at once.
 * The drain also closes the gap the points above leave open: closing the listener resets the
 * connections still in its accept queue, after the balancer may have written a request on them;
 * once the balancer has taken the instance out, there are none.
 *
 * Installed at the root before any plugin: root `preClose` hooks run before those of the
 * plugins registered under it.
 */
export function installGracefulClose(app: FastifyInstance, { keepAliveDrainMs = 0, drain }: GracefulCloseOptions = {}): void {
  let closing = false
  const idle = trackIdleKeepAlive(app)
  app.addHook('preClose', async () => {
    closing = true
    if (!app.server.listening) return
    // Fastify closes the server again after every preClose hook and then waits for the last connection.
    if (keepAliveDrainMs <= 0 || drain?.end === 'checked') return void app.server.close()
    NetServer.prototype.close.call(app.server)
    const drained = await Promise.race([idle.drained().then(() => true), delay(keepAliveDrainMs).then(() => false)])
    if (!drained) app.log.info({ idle: idle.peers() }, `idle keep-alive connections still open after ${keepAliveDrainMs} ms; closing them`)
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}

/** Sockets whose last request was answered and that wait for another (never upgraded or streaming ones). */
function trackIdleKeepAlive(app: FastifyInstance) {
  const idle = new Set<Socket>()
  /** Sockets whose 'close' is already watched (once per socket, however many requests it carries). */
  const watched = new WeakSet<Socket>()
  let emptied: (() => void) | undefined
  const remove = (socket: Socket) => {
    if (idle.delete(socket) && idle.size === 0) emptied?.()
  }
  app.server.on('request', (req, res) => {
    const socket = req.socket
    remove(socket)
    res.once('finish', () => {
      // One answered with Connection: close is closed right after: its 'close' takes it out again.
      if (socket.destroyed) return
      if (!watched.has(socket)) {
        watched.add(socket)
        socket.once('close', () => remove(socket))
      }
      idle.add(socket)
    })
  })
  return {
    peers: () => [...idle].map((s) => `${s.remoteAddress}:${s.remotePort}`),
    async drained(): Promise<void> {
      if (idle.size === 0) return
      await new Promise<void>((resolve) => (emptied = resolve))
    },
  }
}
