import { Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/** How much of a refused body is still read and thrown away, and for how long (contract §2). */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024
export const DISCARD_MAX_MS = 10_000

const EXPECT_CONTINUE = /^\s*100-continue\s*$/i

/**
 * Makes an early answer (413, 401, any error given before the body was read) reach a client
 * that is still sending (contract §2):
 * - `Expect: 100-continue`: Node no longer answers `100 Continue` by itself; the route does,
 *   once credentials passed and `Content-Length` is within its limit, else the error goes out
 *   instead of `100 Continue`.
 * - A declared `Content-Length` over the route's limit is 413 before anything is read, on
 *   every route (the multipart parser would otherwise start reading it).
 * - After an answer given with the body still arriving, the connection is not closed under
 *   the client: the rest is read and discarded, up to 64 MiB or 10 s, then the socket is
 *   destroyed only if the client is still sending.
 */
export function installUnreadBodyHandling(app: FastifyInstance): void {
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res))

  // Callback hooks with a fast path: they run on every request, and most carry no body.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request
    if (headers['content-length'] === undefined && headers.expect === undefined) return done(null, payload)
    const declared = Number(headers['content-length'])
    const limit = request.routeOptions.bodyLimit
    if (declared > limit) return done(new AppError('payload_too_large', `Body of ${declared} bytes is over this endpoint's limit of ${limit}`))
    if (EXPECT_CONTINUE.test(headers.expect ?? '')) reply.raw.writeContinue()
    done(null, payload)
  })

  app.addHook('onSend', (request, reply, payload, done) => {
    if (!mayHaveBody(request) || !bodyStillArriving(request)) return done(null, payload)
    // A client that asked to close gets a connection Node ends right after the answer, resetting
    // a client still sending: its body is read and discarded first, then the answer goes.
    if (clientClosesAfter(request)) return discardRest(request, () => done(null, payload))
    // Fastify asks to close after a body error; closing now would reset a client still sending.
    reply.removeHeader('connection')
    done(null, payload)
  })

  app.addHook('onResponse', (request, _reply, done) => {
    if (mayHaveBody(request) && bodyStillArriving(request)) discardRest(request)
    done()
  })
}

/** The request asked for the connection to close after the answer (`Connection: close`, or HTTP/1.0 without keep-alive). */
function clientClosesAfter({ raw, headers }: FastifyRequest): boolean {
  const tokens = (headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim())
  if (tokens.includes('close')) return true
  return raw.httpVersionMajor === 1 && raw.httpVersionMinor === 0 && !tokens.includes('keep-alive')
}

const mayHaveBody = ({ headers }: FastifyRequest) => headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined

function bodyStillArriving(request: FastifyRequest): boolean {
  const { raw, headers } = request
  // Injected requests (tests) have no socket to keep reading from.
  if (!(raw.socket instanceof Socket) || raw.complete || raw.destroyed) return false
  if (!(Number(headers['content-length']) > 0) && headers['transfer-encoding'] === undefined) return false
  // A client that waits for 100 Continue sends nothing when refused: nothing to discard.
  return !EXPECT_CONTINUE.test(request.headers.expect ?? '') || raw.readableLength > 0
}

/** Reads and throws away the rest of the body; `drained` runs once it all arrived (not when the limits cut it off). */
function discardRest(request: FastifyRequest, drained?: () => void): void {
  const { raw } = request
  const socket = raw.socket
  let discarded = 0
  const giveUp = () => {
    cleanup()
    socket.destroy()
  }
  const ended = () => {
    cleanup()
    drained?.()
  }
  const timer = setTimeout(giveUp, DISCARD_MAX_MS)
  timer.unref()
  const onData = (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > DISCARD_MAX_BYTES) giveUp()
  }
  const cleanup = () => {
    clearTimeout(timer)
    raw.off('data', onData)
    raw.off('end', ended)
    raw.off('close', cleanup)
  }
  raw.on('data', onData)
  raw.once('end', ended)
  raw.once('close', cleanup)
  raw.resume()
}
