/**
 * The server of the data benchmark, in a child process of the benchmark (one process tree): the
 * app as `fleetgate serve` builds it, listening on 127.0.0.1 port 0, its address sent back over
 * IPC. On request it runs a pass of the product's retention job (`RetentionJob`, on the app's
 * own database handle) with another telemetry retention, so pruning happens in a warm server
 * under load, as the periodic pass does. The child stops when the parent goes away.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { serverLogger } from '../src/http/server-logger.js'
import { openConfiguredStorage } from '../src/server.js'
import { CommandQueue } from '../src/platform/commands/command-queue.js'
import { RETENTION_LOCK } from '../src/platform/platform-plugin.js'
import { RetentionJob } from '../src/platform/retention/retention-job.js'
import { TelemetryStore } from '../src/platform/telemetry/telemetry-store.js'
import { BENCH_NODE_FLAGS } from './node-flags.js'

export interface DataServer {
  base: string
  /** One retention pass with TELEMETRY_RETENTION_DAYS = `days`: points pruned and how long it took. */
  prune(days: number): Promise<{ telemetry: number; seconds: number }>
  stop(): Promise<void>
}

const HERE = fileURLToPath(import.meta.url)
/** A server that does not exit this long after SIGTERM is killed (and said so): the benchmark still ends. */
const STOP_GRACE_MS = 20_000

export async function startDataServer(env: Record<string, string>): Promise<DataServer> {
  const child: ChildProcess = fork(HERE, ['--data-server'], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    execArgv: [...BENCH_NODE_FLAGS],
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
  })
  // Read to the end: a pipe nobody reads fills up (a long run's sampled access lines), and the
  // server's exit then waited on its log. Errors are shown.
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (/^\{"level":[56]0,/.test(line)) console.error(`  server: ${line}`)
  })
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the server exited with ${code}`)
  })
  exited.catch(() => undefined)
  const answer = <T>() => Promise.race([once(child, 'message').then(([m]) => m as T), exited])
  const port = await answer<number>()
  return {
    base: `http://127.0.0.1:${port}`,
    async prune(days) {
      child.send({ prune: days })
      return answer<{ telemetry: number; seconds: number }>()
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exit = once(child, 'exit')
      const sent = performance.now()
      child.kill('SIGTERM')
      const timer = setTimeout(() => {
        console.log(`  !! the server did not stop within ${STOP_GRACE_MS / 1000} s of SIGTERM: killed`)
        child.kill('SIGKILL')
      }, STOP_GRACE_MS)
      const [code, signal] = await exit
      clearTimeout(timer)
      console.log(`  server stopped ${((performance.now() - sent) / 1000).toFixed(1)} s after SIGTERM (${signal ?? `exit ${code}`})`)
    },
  }
}

async function serveForBench(): Promise<void> {
  const config = loadConfig(process.env)
  const storage = await openConfiguredStorage(config)
  const app = await buildApp(config, { storage, loggerInstance: serverLogger(config.logLevel) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  process.send!((app.server.address() as AddressInfo).port)
  const { db } = storage
  const commands = new CommandQueue(storage, { ackTimeoutMs: config.commandAckTimeoutSeconds * 1000, maxAttempts: config.commandMaxAttempts, ttlMs: config.commandTtlSeconds * 1000 })
  // A pass under way stops at its next batch when the server stops (as the periodic one does).
  const abort = new AbortController()
  let pruning: Promise<unknown> = Promise.resolve()
  process.on('message', (message: { prune: number }) => {
    const job = new RetentionJob(
      {
        db,
        telemetry: new TelemetryStore(storage),
        commands,
        telemetryRetentionDays: message.prune,
        logRetentionDays: config.logRetentionDays,
        exclusive: (fn) => storage.exclusive(RETENTION_LOCK, fn),
      },
      app.log,
    )
    const started = performance.now()
    pruning = job.runExclusive(Date.now(), abort.signal).then((r) => process.send!({ telemetry: r?.telemetry ?? 0, seconds: (performance.now() - started) / 1000 }))
  })
  const stop = () => {
    setTimeout(() => console.error('bench data server still stopping after 5 s; waiting on', process.getActiveResourcesInfo()), 5000).unref()
    abort.abort()
    void pruning
      .catch(() => undefined)
      .then(() => app.close())
      .finally(() => process.exit(0))
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  // The benchmark stopped (even killed): stop too.
  process.on('disconnect', stop)
}

if (process.argv[2] === '--data-server') await serveForBench()
