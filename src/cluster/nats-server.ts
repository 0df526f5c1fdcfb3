import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { freePort } from './local-cluster.js'

/** A nats-server of the caller's own on a spare port, which a test may kill and start again. */
export interface NatsServer {
  /** nats://127.0.0.1:<port> */
  readonly url: string
  readonly port: number
  /** http://127.0.0.1:<port> of the monitoring endpoints (/varz…), when started with `monitor`. */
  readonly monitorUrl: string | undefined
  /** The server's process id while it runs. */
  readonly pid: number | undefined
  /** SIGKILLs the server (every client's socket drops at once); resolves once it is gone. */
  kill(): Promise<void>
  /** Starts it again on the same port; resolves once it says it is ready. */
  start(): Promise<void>
  /** Kills it if it runs. */
  destroy(): Promise<void>
}

/** The nats-server binary: on PATH, or where Debian's package puts it. */
export function findNatsServer(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/bin']) {
    const candidate = path.join(dir, 'nats-server')
    if (dir && existsSync(candidate)) return candidate
  }
  return undefined
}

export interface NatsServerOptions {
  /** Also serve the monitoring endpoints (`-m`, on a spare port). */
  monitor?: boolean
  /** More command-line arguments, e.g. `--user u --pass p` or `--auth token`. */
  args?: readonly string[]
}

export async function startNatsServer({ monitor = false, args = [] }: NatsServerOptions = {}): Promise<NatsServer> {
  const binary = findNatsServer()
  if (!binary) throw new Error('nats-server is not installed (Debian: apt-get install -y nats-server)')
  const port = await freePort()
  const monitorPort = monitor ? await freePort() : undefined
  let child: ChildProcess | undefined
  let exited: Promise<unknown> = Promise.resolve()
  const killAtExit = () => child?.kill('SIGKILL')
  process.once('exit', killAtExit)

  const start = async () => {
    const proc = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), ...(monitorPort ? ['-m', String(monitorPort)] : []), ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    child = proc
    exited = once(proc, 'exit')
    let output = ''
    await new Promise<void>((resolve, reject) => {
      proc.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8')
        if (output.includes('Server is ready')) resolve()
      })
      void exited.then(() => reject(new Error(`nats-server exited while starting: ${output}`)))
    })
  }
  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
    child = undefined
  }
  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorUrl: monitorPort ? `http://127.0.0.1:${monitorPort}` : undefined,
    get pid() {
      return child?.pid
    },
    kill,
    start,
    async destroy() {
      await kill()
      process.off('exit', killAtExit)
    },
  }
}
