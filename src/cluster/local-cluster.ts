import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { renderLocalNginx, renderSite } from './nginx-config.js'
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.js'
import { delay } from '../lib/time.js'

export interface LocalClusterOptions {
  instances: number
  /** PostgreSQL server; the cluster creates a database of its own on it and drops it at stop. */
  postgresUrl: string
  natsUrl: string
  /** nginx's port; 0 picks a free one. */
  port?: number
  host?: string
  /** Extra environment of every instance (CLOUD_AUTH_USERS, time-outs…). */
  env?: Record<string, string>
  /** Where instance output goes; default: dropped. */
  log?: (instance: string, line: string) => void
  /** The compiled CLI to run (`fleetgate serve`); default: the one beside this file. */
  cli?: string
}

export interface LocalInstance {
  id: string
  /** http://127.0.0.1:<port>, the instance itself (not through nginx). */
  url: string
  child: ChildProcess
  exited: Promise<number | null>
}

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../cli/main.js')

/** The nginx binary: on PATH, or where Debian's package puts it. */
export function findNginx(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']) {
    const candidate = path.join(dir, 'nginx')
    if (dir && existsSync(candidate)) return candidate
  }
  return undefined
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer()
  server.listen(0, host)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

/**
 * N `fleetgate serve` processes on a scratch PostgreSQL database and the given NATS, behind
 * nginx configured from deploy/nginx (rendered into a temporary directory). `stop` ends
 * everything it started and drops the database.
 */
export class LocalCluster {
  readonly instances: LocalInstance[] = []
  url = ''
  database: ScratchDatabase | undefined
  private nginx: ChildProcess | undefined
  private nginxExited: Promise<unknown> | undefined
  private dir: string | undefined
  private stopped = false

  constructor(private readonly options: LocalClusterOptions) {}

  async start(): Promise<void> {
    const nginxBin = findNginx()
    if (!nginxBin) throw new Error('nginx is not installed (Debian: apt-get install -y nginx)')
    const cli = this.options.cli ?? CLI
    if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npm run build)`)
    this.database = await createScratchDatabase(this.options.postgresUrl, 'fleetgate_cluster')
    this.dir = await mkdtemp(path.join(os.tmpdir(), 'fleetgate-nginx-'))
    // One at a time: the first one migrates the new database.
    for (let i = 1; i <= this.options.instances; i++) this.instances.push(await this.startInstance(`local-${i}`))

    const host = this.options.host ?? '127.0.0.1'
    const port = this.options.port || (await freePort(host))
    const site = renderSite({ upstreams: this.instances.map((i) => new URL(i.url).host), listen: `${host}:${port}` })
    for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(this.dir, sub))
    await writeFile(path.join(this.dir, 'fleetgate.conf'), site)
    await writeFile(path.join(this.dir, 'nginx.conf'), renderLocalNginx(this.dir))
    // Workers may run as another user (nobody, when started as root): let them write temp files.
    for (const sub of ['', 'client_body', 'proxy']) await chmod(path.join(this.dir, sub), 0o777)
    let errors = ''
    this.nginx = spawn(nginxBin, ['-p', this.dir, '-c', path.join(this.dir, 'nginx.conf'), '-e', path.join(this.dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] })
    this.nginx.stderr!.on('data', (d) => (errors += d))
    this.nginxExited = once(this.nginx, 'exit')
    this.url = `http://${host}:${port}`
    const failed = this.nginxExited.then(() => {
      throw new Error(`nginx exited: ${errors}`)
    })
    failed.catch(() => undefined)
    await Promise.race([waitReady(this.url), failed])
  }

  /** SIGKILLs one instance (no graceful close) and resolves once it is gone. */
  async kill(instance: LocalInstance): Promise<void> {
    instance.child.kill('SIGKILL')
    await instance.exited
  }

  /**
   * SIGTERMs one instance (a graceful stop: contract §1) and resolves with its exit code once
   * it is gone. `startAgain` brings it back.
   */
  async terminate(instance: LocalInstance): Promise<number | null> {
    if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGTERM')
    return instance.exited
  }

  /**
   * Starts a stopped instance again under the same id and on the same port, so nginx's
   * upstream finds it, and resolves once its /readyz answers 200. The new process takes the
   * old one's place in `instances`.
   */
  async startAgain(instance: LocalInstance): Promise<LocalInstance> {
    const index = this.instances.indexOf(instance)
    if (index < 0) throw new Error(`instance ${instance.id} is not one of this cluster's`)
    if (instance.child.exitCode === null && instance.child.signalCode === null) throw new Error(`instance ${instance.id} is still running`)
    const started = await this.startInstance(instance.id, Number(new URL(instance.url).port))
    this.instances[index] = started
    return started
  }

  /** What nginx has written to its error log so far (level warn and above), '' before it started. */
  async nginxErrorLog(): Promise<string> {
    if (!this.dir) return ''
    return readFile(path.join(this.dir, 'error.log'), 'utf8').catch(() => '')
  }

  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    if (this.nginx && this.nginx.exitCode === null) {
      this.nginx.kill('SIGQUIT')
      await this.nginxExited
    }
    await Promise.all(
      this.instances.map(async (i) => {
        if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGTERM')
        await i.exited
      }),
    )
    await this.database?.drop().catch(() => undefined)
    if (this.dir) await rm(this.dir, { recursive: true, force: true })
  }

  private async startInstance(id: string, port?: number): Promise<LocalInstance> {
    port ??= await freePort()
    const child = spawn(process.execPath, [this.options.cli ?? CLI, 'serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: 'warn',
        ...this.options.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        INSTANCE_ID: id,
        DATABASE_URL: this.database!.url,
        NATS_URL: this.options.natsUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const log = this.options.log
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (d: Buffer) => {
        if (log) for (const line of d.toString('utf8').split('\n')) if (line) log(id, line)
      })
    }
    const exited = once(child, 'exit').then(([code]) => code as number | null)
    const url = `http://127.0.0.1:${port}`
    const died = exited.then((code) => {
      throw new Error(`instance ${id} exited with ${code} while starting`)
    })
    died.catch(() => undefined)
    try {
      await Promise.race([waitReady(url), died])
    } catch (err) {
      // Never leave a process behind that nobody will stop.
      child.kill('SIGKILL')
      throw err
    }
    return { id, url, child, exited }
  }
}

/** Polls /readyz until it answers 200. */
async function waitReady(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms`)
    await delay(100)
  }
}
