import type { FastifyBaseLogger } from 'fastify'
import pino, { type DestinationStream } from 'pino'
import pretty from 'pino-pretty'

const PRETTY = { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }

/**
 * The server's logger: human-readable lines (pino-pretty) when stdout is a terminal, JSON lines
 * otherwise. On a terminal the formatting runs in a worker thread. JSON goes through an
 * asynchronous, buffered destination: pino's default synchronous write to a pipe blocked the
 * event loop under load. The buffer is flushed at exit, so a clean stop loses nothing.
 * `destination` replaces stdout (tests, benchmarks).
 */
export function serverLogger(level: string, options: { tty?: boolean; destination?: DestinationStream } = {}): FastifyBaseLogger {
  const tty = options.tty ?? process.stdout.isTTY === true
  if (tty) {
    if (options.destination) return pino({ level }, pretty({ ...PRETTY, colorize: false, sync: true, destination: options.destination as NodeJS.WritableStream }))
    return pino({ level, transport: { target: 'pino-pretty', options: { ...PRETTY, colorize: true } } })
  }
  if (options.destination) return pino({ level }, options.destination)
  const stdout = pino.destination({ dest: 1, sync: false })
  process.once('exit', () => {
    try {
      stdout.flushSync()
    } catch {
      // stdout already closed: nothing more can be written.
    }
  })
  return pino({ level }, stdout)
}
