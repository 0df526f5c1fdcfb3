import type { FastifyInstance } from 'fastify'

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
 *   each connection ends after its answer. Node closes only the connections idle when the
 *   listener closes; one busy then and idle after would otherwise stay open (nginx keeps upstream
 *   connections for a minute), hold the close up and make the process miss its 10 s.
 *
 * Installed at the root before any plugin: root `preClose` hooks run before those of the
 * plugins registered under it.
 */
export function installGracefulClose(app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    // Fastify closes the server again after every preClose hook and then waits for the last connection.
    if (app.server.listening) app.server.close()
    done()
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}
