import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { once } from 'node:events'

export const CLI = path.resolve('dist/src/cli/main.js')

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the build (npm test does) before these tests`)
}

export interface ServerProcess {
  child: ChildProcess
  url: string
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>
}

/**
 * Runs `fleetgate <args>` as a child process with exactly `env` (plus PATH): as `node <cli>`, or
 * with `asCommand` as the installed command runs, the file itself through its shebang.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  asCommand = false,
  cli = CLI,
): { child: ChildProcess; exited: Promise<number | null>; out: () => string; err: () => string } {
  if (cli === CLI) assertBuilt()
  const [command, commandArgs] = asCommand ? [cli, args] : [process.execPath, [cli, ...args]]
  const child = spawn(command, commandArgs, {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return { child, exited, out: () => out, err: () => err }
}

/** Starts `fleetgate serve` on an ephemeral port and waits for its listening line. */
export async function startServerProcess(env: Record<string, string>, asCommand = false, cli = CLI): Promise<ServerProcess> {
  const run = runCli(['serve'], { HOST: '127.0.0.1', PORT: '0', ...env }, asCommand, cli)
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.out())
      if (match) {
        run.child.stdout!.off('data', onData)
        resolve(match[1]!)
      }
    }
    run.child.stdout!.on('data', onData)
    run.exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${run.err()} ${run.out()}`)))
  })
  return { child: run.child, url, stdout: run.out, stderr: run.err, exited: run.exited }
}

/** Whether a new connection to 127.0.0.1:`port` is accepted: the server still listens. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const probe = connect(port, '127.0.0.1')
    probe.once('connect', () => {
      probe.destroy()
      resolve(true)
    })
    probe.once('error', () => resolve(false))
  })
}

/** SIGKILLs a server a test left running (after a failure) and waits until it is gone. */
export async function killIfRunning(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return
  server.child.kill('SIGKILL')
  await server.exited
}
