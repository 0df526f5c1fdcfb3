import { execFile, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './local-cluster.js'

const run = promisify(execFile)

/**
 * A PostgreSQL server of the caller's own (initdb in a temporary directory, a spare port), which
 * a test may stop and start at will, or a benchmark measure alone: the machine's own server
 * (5432) is never touched.
 */
export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string
  readonly port: number
  /** `pg_ctl stop`: `immediate` is a crash (no checkpoint, sessions cut), `fast` a clean stop. Resolves once it is down. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>
  /** `pg_ctl start` on the same port; resolves once it accepts connections. */
  start(): Promise<void>
  /** Stops the server (if running) and removes its directory. */
  destroy(): Promise<void>
  /** The server's own log, for a failing test's message. */
  log(): Promise<string>
  /** The postmaster's process id while it runs (its `postmaster.pid`), else undefined. */
  pid(): Promise<number | undefined>
}

/** The directory holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/<version>/bin (Debian). */
export function postgresBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir
  }
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined
}

/** PostgreSQL refuses to run as root: as root, commands run as the `postgres` user through runuser. */
const asRoot = () => process.getuid?.() === 0
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) => existsSync(p))

/** Why a PostgreSQL of our own cannot be started here, or undefined when it can. */
export function postgresServerProblem(): string | undefined {
  if (!postgresBinDir()) return 'initdb/pg_ctl not found (PATH, /usr/lib/postgresql/*/bin)'
  if (asRoot() && !RUNUSER) return 'running as root, but runuser is missing to run PostgreSQL as the postgres user'
  if (asRoot() && !userIds('postgres')) return 'running as root, but there is no postgres user'
  return undefined
}

function userIds(user: string): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' })
  const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' })
  if (uid.status !== 0 || gid.status !== 0) return undefined
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

/** The command line that runs `bin` (from the PostgreSQL bin directory) as the right user. */
function command(bin: string, args: string[]): [string, string[]] {
  const file = path.join(postgresBinDir()!, bin)
  return asRoot() ? [RUNUSER!, ['-u', 'postgres', '--', file, ...args]] : [file, args]
}

export interface PostgresServerOptions {
  /** Server settings (`-c name=value`) besides the port, socket directory and listen address; default max_connections=50. */
  settings?: Record<string, string>
}

/** initdb (trust authentication, user `postgres`) and start on a spare port; sockets live in the directory too. */
export async function startPostgresServer({ settings = {} }: PostgresServerOptions = {}): Promise<PostgresServer> {
  const problem = postgresServerProblem()
  if (problem) throw new Error(`cannot start a PostgreSQL of our own: ${problem}`)
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fleetgate-pg-'))
  const data = path.join(dir, 'data')
  const logFile = path.join(dir, 'server.log')
  let running = false
  const cleanUpAtExit = () => {
    // This process is going away without destroy() (a crash): leave no server and no directory behind.
    if (running) spawnSync(...command('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']), { stdio: 'ignore' })
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', cleanUpAtExit)
  try {
    if (asRoot()) {
      const { uid, gid } = userIds('postgres')!
      await chown(dir, uid, gid)
    }
    await run(...command('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']))
    const port = await freePort()
    const all = { max_connections: '50', ...settings, listen_addresses: '127.0.0.1' }
    const options = ['-p', String(port), '-k', dir, ...Object.entries(all).flatMap(([name, value]) => ['-c', `${name}=${value}`])].join(' ')
    const pgCtl = (args: string[]) => run(...command('pg_ctl', ['-D', data, ...args]), { timeout: 60_000 })
    const start = async () => {
      // -l: the server must not inherit this process's pipes, or pg_ctl's caller would wait for it.
      await pgCtl(['-l', logFile, '-o', options, '-w', '-t', '30', 'start'])
      running = true
    }
    await start()
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      start,
      async stop(mode = 'immediate') {
        await pgCtl(['-m', mode, '-w', 'stop'])
        running = false
      },
      async destroy() {
        if (running) await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => undefined)
        running = false
        await rm(dir, { recursive: true, force: true })
        process.off('exit', cleanUpAtExit)
      },
      log: () => readFile(logFile, 'utf8').catch(() => ''),
      pid: async () => (running ? Number((await readFile(path.join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]) : undefined),
    }
  } catch (err) {
    cleanUpAtExit()
    process.off('exit', cleanUpAtExit)
    throw err
  }
}
