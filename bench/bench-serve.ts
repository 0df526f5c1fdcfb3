/**
 * `fleetgate serve` in a child process for a benchmark, as deployed (the load generator keeps the
 * other core): on 127.0.0.1 at a free port, with the benchmark Node flags, ready once
 * `GET /readyz` answers 200.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '../src/cluster/local-cluster.js'
import { BENCH_NODE_FLAGS } from './node-flags.js'

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/cli/main.js')

export interface ServeOptions {
  /** Added to (or overriding) PATH, HOST, PORT and LOG_LEVEL=warn. */
  env?: Record<string, string>
  /** Node flags after the benchmark ones, e.g. profiling. */
  nodeArgs?: readonly string[]
  /** Named in the error when the server exits before it is ready. */
  name?: string
  /** Keep the server's stderr for that error instead of passing it through. */
  captureStderr?: boolean
  /** How long it may take to be ready; 10 s unless said. */
  readyWithinMs?: number
}

export interface ServedServer {
  child: ChildProcess
  base: string
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>
}

export async function startServe(options: ServeOptions = {}): Promise<ServedServer> {
  const port = await freePort()
  const child = spawn(process.execPath, [...BENCH_NODE_FLAGS, ...(options.nodeArgs ?? []), CLI, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'ignore', options.captureStderr ? 'pipe' : 'inherit'],
  })
  let stderr = ''
  child.stderr?.on('data', (d) => (stderr += d))
  const server: ServedServer = {
    child,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM')
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
    },
  }
  const deadline = performance.now() + (options.readyWithinMs ?? 10_000)
  try {
    while (!(await fetch(`${server.base}/readyz`).then((r) => r.ok, () => false))) {
      if (child.exitCode !== null) throw new Error(`${options.name ?? 'server'} exited with ${child.exitCode}${stderr && `: ${stderr}`}`)
      if (performance.now() > deadline) throw new Error(`${options.name ?? 'server'} did not start`)
      await delay(50)
    }
  } catch (err) {
    await server.stop()
    throw err
  }
  return server
}
