import type { FastifyBaseLogger } from 'fastify'
import pino, { type DestinationStream } from 'pino'
import pretty from 'pino-pretty'

const PRETTY = { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }

/**
 * The server's logger: human-readable lines (pino-pretty) when stdout is a terminal, JSON lines
 * otherwise. On a terminal the formatting runs in a worker thread. JSON goes through an
 * asynchronous, buffered destination: pino's default synchronous write to a pipe blocked the
 * event loop under load. The buffer is flushed at exit, so a clean stop loses nothing while
 * stdout is read (see EXIT_FLUSH_MS).
 * `destination` replaces stdout (tests, benchmarks).
 */
export function serverLogger(level: string, options: { tty?: boolean; destination?: DestinationStream } = {}): FastifyBaseLogger {
  const tty = options.tty ?? process.stdout.isTTY === true
  if (tty) {
    if (options.destination) return pino({ level }, pretty({ ...PRETTY, colorize: false, sync: true, destination: options.destination as NodeJS.WritableStream }))
    return pino({ level, transport: { target: 'pino-pretty', options: { ...PRETTY, colorize: true } } })
  }
  if (options.destination) return pino({ level }, options.destination)
  let exiting: number | undefined
  let stdout: ReturnType<typeof pino.destination> | undefined
  // Registered before the destination, so before pino's own exit flush (unbounded, and throwing
  // out of the exit handler when it fails): this one is bounded, and leaves pino's nothing to do.
  process.once('exit', () => {
    exiting = performance.now()
    try {
      stdout?.flushSync()
    } catch {
      // stdout closed, or not read within EXIT_FLUSH_MS: the rest of the log is lost, the exit is not held.
    }
    stdout?.destroy()
  })
  stdout = pino.destination({
    dest: 1,
    sync: false,
    maxLength: MAX_BUFFERED_LOG_BYTES,
    // A full pipe (its reader stopped reading) is retried, while running, without blocking; at
    // exit, for EXIT_FLUSH_MS at most: unbounded, the flush kept the process from exiting at all.
    retryEAGAIN: () => exiting === undefined || performance.now() - exiting < EXIT_FLUSH_MS,
  })
  return pino({ level }, stdout)
}

/**
 * How long the exit waits for a stdout that is not being read. The flush runs in the 'exit'
 * handler, where no timer fires: `serve`'s forced exit after SHUTDOWN_GRACE_MS ends there too.
 */
export const EXIT_FLUSH_MS = 2000
/** Log lines buffered while stdout is not read (beyond, new lines are dropped): the server's memory is not the log's. */
const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024
