import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect, createServer, type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { HAPROXY_CHECK_TIMING, renderLocal, renderSite, type BalancerKind } from './balancer-config.js'
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.js'
import { delay } from '../lib/time.js'

export interface LocalClusterOptions {
  instances: number
  /** PostgreSQL server; the cluster creates a database of its own on it and drops it at stop. */
  postgresUrl: string
  natsUrl: string
  /** The load balancer in front, configured from deploy/<balancer>; default haproxy. */
  balancer?: BalancerKind
  /** HAProxy's health-check timing (default HAPROXY_CHECK_TIMING); tests shorten it. */
  checkTiming?: string
  /** The load balancer's port; 0 picks a free one. */
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
  /** http://127.0.0.1:<port>, the instance itself (not through the load balancer). */
  url: string
  child: ChildProcess
  exited: Promise<number | null>
}

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../cli/main.js')

/** The load balancer's binary (nginx, haproxy): on PATH, or where Debian's package puts it. */
export function findBalancer(kind: BalancerKind): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']) {
    const candidate = path.join(dir, kind)
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

/** What the balancer's process wrote on stderr is kept up to this many characters (the last ones). */
const BALANCER_OUTPUT_KEPT = 200_000

/**
 * N `fleetgate serve` processes on a scratch PostgreSQL database and the given NATS, behind
 * HAProxy or nginx configured from deploy/ (rendered into a temporary directory). `stop` ends
 * everything it started and drops the database.
 */
export class LocalCluster {
  readonly instances: LocalInstance[] = []
  readonly balancerKind: BalancerKind
  url = ''
  database: ScratchDatabase | undefined
  private balancer: ChildProcess | undefined
  private balancerExited: Promise<unknown> | undefined
  /** The balancer's stderr: HAProxy's log, nginx's start-up errors. */
  private balancerOutput = ''
  private dir: string | undefined
  private stopped = false

  constructor(private readonly options: LocalClusterOptions) {
    this.balancerKind = options.balancer ?? 'haproxy'
  }

  async start(): Promise<void> {
    const kind = this.balancerKind
    const bin = findBalancer(kind)
    if (!bin) throw new Error(`${kind} is not installed (Debian: apt-get install -y ${kind})`)
    const cli = this.options.cli ?? CLI
    if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npm run build)`)
    this.database = await createScratchDatabase(this.options.postgresUrl, 'fleetgate_cluster')
    const dir = (this.dir = await mkdtemp(path.join(os.tmpdir(), `fleetgate-${kind}-`)))
    // One at a time: the first one migrates the new database.
    for (let i = 1; i <= this.options.instances; i++) this.instances.push(await this.startInstance(`local-${i}`))

    const host = this.options.host ?? '127.0.0.1'
    const port = this.options.port || (await freePort(host))
    const site = renderSite(kind, { upstreams: this.instances.map((i) => ({ name: i.id, address: new URL(i.url).host })), listen: `${host}:${port}` }, { checkTiming: this.options.checkTiming })
    let args: string[]
    if (kind === 'nginx') {
      for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(dir, sub))
      await writeFile(path.join(dir, 'fleetgate.conf'), site)
      await writeFile(path.join(dir, 'nginx.conf'), renderLocal(kind, dir))
      // Workers may run as another user (nobody, when started as root): let them write temp files.
      for (const sub of ['', 'client_body', 'proxy']) await chmod(path.join(dir, sub), 0o777)
      args = ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')]
    } else {
      await writeFile(path.join(dir, 'haproxy-local.cfg'), renderLocal(kind, dir))
      await writeFile(path.join(dir, 'fleetgate.cfg'), site)
      args = ['-db', '-f', path.join(dir, 'haproxy-local.cfg'), '-f', path.join(dir, 'fleetgate.cfg')]
    }
    this.balancer = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    this.balancer.stderr!.on('data', (d) => (this.balancerOutput = (this.balancerOutput + d).slice(-BALANCER_OUTPUT_KEPT)))
    this.balancerExited = once(this.balancer, 'exit')
    this.url = `http://${host}:${port}`
    const failed = this.balancerExited.then(() => {
      throw new Error(`${kind} exited: ${this.balancerOutput}`)
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
   * Starts a stopped instance again under the same id and on the same port, so the balancer
   * finds it, and resolves once its /readyz answers 200 and, behind HAProxy, HAProxy has it back
   * in rotation (nginx has no such state: it tries the instance again on its own). The new
   * process takes the old one's place in `instances`.
   */
  async startAgain(instance: LocalInstance): Promise<LocalInstance> {
    const index = this.instances.indexOf(instance)
    if (index < 0) throw new Error(`instance ${instance.id} is not one of this cluster's`)
    if (instance.child.exitCode === null && instance.child.signalCode === null) throw new Error(`instance ${instance.id} is still running`)
    const started = await this.startInstance(instance.id, Number(new URL(instance.url).port))
    this.instances[index] = started
    if (this.balancerKind === 'haproxy') await this.inRotation(started)
    return started
  }

  /**
   * The balancer's account of what went wrong so far: nginx's error log (level warn and above), or
   * HAProxy's log (requests that failed, were retried or redispatched; servers going down and up).
   */
  async balancerLog(): Promise<string> {
    if (this.balancerKind === 'haproxy' || !this.dir) return this.balancerOutput
    return readFile(path.join(this.dir, 'error.log'), 'utf8').catch(() => '')
  }

  /** HAProxy's state of each instance (`UP`, `DOWN`, `UP 1/2`, …) by instance id, from its admin socket. */
  async balancerStates(): Promise<Map<string, string>> {
    if (this.balancerKind !== 'haproxy' || !this.dir) throw new Error('only HAProxy reports the state of its servers')
    const socket = connect(path.join(this.dir, 'admin.sock'))
    let text = ''
    socket.on('data', (d) => (text += d))
    socket.end('show stat\n')
    await once(socket, 'close')
    const rows = text.split('\n').map((line) => line.split(','))
    const column = (rows[0] ?? []).indexOf('status')
    return new Map(rows.filter((r) => r[0] === 'fleetgate' && r[1] !== 'BACKEND').map((r) => [r[1]!, r[column]!]))
  }

  /** Resolves once HAProxy has the instance in rotation (its health checks passed `rise` times). */
  private async inRotation(instance: LocalInstance, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while ((await this.balancerStates()).get(instance.id) !== 'UP') {
      if (Date.now() > deadline) throw new Error(`HAProxy did not put ${instance.id} back in rotation within ${timeoutMs} ms`)
      await delay(50)
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    const stopInstances = () =>
      Promise.all(
        this.instances.map(async (i) => {
          if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGTERM')
          await i.exited
        }),
      )
    // Behind HAProxy the instances go first: their drain ends as soon as HAProxy's checks took them out.
    if (this.balancerKind === 'haproxy') await stopInstances()
    if (this.balancer && this.balancer.exitCode === null) {
      // nginx: finish what is under way; HAProxy: at once (a soft stop would wait for every device link).
      this.balancer.kill(this.balancerKind === 'nginx' ? 'SIGQUIT' : 'SIGTERM')
      await this.balancerExited
    }
    await stopInstances()
    await this.database?.drop().catch(() => undefined)
    if (this.dir) await rm(this.dir, { recursive: true, force: true })
  }

  private async startInstance(id: string, port?: number): Promise<LocalInstance> {
    port ??= await freePort()
    const child = spawn(process.execPath, [this.options.cli ?? CLI, 'serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: 'warn',
        // Every machine of a local cluster (simulators, benchmarks) links from this host: one address.
        DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: '100000',
        ...(this.balancerKind === 'haproxy' ? drainSettings(this.options.checkTiming ?? HAPROXY_CHECK_TIMING) : {}),
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

/**
 * Behind HAProxy, an instance drains at SIGTERM (docs/deploy.md, "Rolling restart") until
 * HAProxy's checks have taken it out: fall + 1 "draining" answers, 5 s at most.
 */
function drainSettings(checkTiming: string): Record<string, string> {
  const fall = Number(/\bfall (\d+)/.exec(checkTiming)?.[1] ?? 3)
  return { SHUTDOWN_DRAIN_SECONDS: '5', SHUTDOWN_DRAIN_CHECKS: String(fall + 1) }
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
