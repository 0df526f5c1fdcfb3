/**
 * The servers of the proxy benchmark, each alone in a child process (so that valgrind can run
 * just one of them): the bare Fastify route, the forwarding floor, or fleetgate. The parent
 * sends the name, the child answers with the URL and headers to load, and binds the bench
 * device when asked (`'bind'`, once the device has registered).
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import Fastify from 'fastify'
import { POSITION } from './bench-devices.js'
import { BENCH_NODE_FLAGS } from './node-flags.js'
import { startFloorForwarder } from './bench-floor.js'
import { POSITION_PATH, startBenchGateway, urlOf } from './bench-gateway.js'

export type TargetName = 'bare' | 'floor' | 'forwarded'

export interface Target {
  pid: number
  /** Where the devices link (floor, forwarded) and the requests go. */
  url: string
  path: string
  headers: Record<string, string>
  bindDevice(): Promise<void>
  /** Starts (true) or stops (false) watching the server's event-loop delay; stopping answers what it saw, in ms. */
  watchDelay(on: boolean): Promise<{ p99: number; max: number }>
  stop(): Promise<void>
}

const HERE = fileURLToPath(import.meta.url)

/**
 * Starts a target server process; `wrapper` as in `startDevice`. `slowDevice`: fleetgate waits
 * 120 s for a device rather than 10 s (a device under valgrind stalls for seconds when counting
 * starts). Only then: under valgrind, fleetgate with the longer time-out counted a fifth more
 * instructions per request, which it does not cost at full speed.
 */
export async function startTarget(name: TargetName, wrapper: string[] = [], slowDevice = false): Promise<Target> {
  const child = fork(HERE, ['--target-child'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Every server (bare, floor, fleetgate) runs with the same flags: the benchmarks' (node-flags.ts).
    execPath: wrapper[0] ?? process.execPath,
    execArgv: [...(wrapper.length > 0 ? [...wrapper.slice(1), process.execPath] : []), ...BENCH_NODE_FLAGS],
  })
  child.send({ name, slowDevice })
  const [ready] = (await once(child, 'message')) as [{ url: string; path: string; headers: Record<string, string> }]
  return {
    pid: child.pid!,
    ...ready,
    async bindDevice() {
      child.send('bind')
      await once(child, 'message')
    },
    async watchDelay(on) {
      child.send(on ? 'delay-start' : 'delay-stop')
      const [seen] = (await once(child, 'message')) as [{ p99: number; max: number }]
      return seen
    },
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

interface Served {
  ready: { url: string; path: string; headers: Record<string, string> }
  bind(): Promise<void>
  close(): Promise<void>
}

async function serve(name: TargetName, slowDevice: boolean): Promise<Served> {
  const none = async () => undefined
  if (name === 'bare') {
    const bare = Fastify({ logger: false })
    bare.get('/position', async () => ({ success: true, status: 200, data: POSITION }))
    await bare.listen({ port: 0, host: '127.0.0.1' })
    return { ready: { url: urlOf(bare), path: '/position', headers: {} }, bind: none, close: () => bare.close() }
  }
  if (name === 'floor') {
    const floor = await startFloorForwarder()
    return { ready: { url: urlOf(floor), path: POSITION_PATH, headers: {} }, bind: none, close: () => floor.close() }
  }
  const gateway = await startBenchGateway(slowDevice ? { DEVICE_REQUEST_TIMEOUT_MS: '120000' } : {})
  return { ready: { url: gateway.url, path: POSITION_PATH, headers: gateway.auth }, bind: () => gateway.bindDevice(), close: () => gateway.close() }
}

if (process.argv[2] === '--target-child') {
  process.once('message', ({ name, slowDevice }: { name: TargetName; slowDevice: boolean }) => {
    void serve(name, slowDevice).then((served) => {
      process.send!(served.ready)
      let delay: ReturnType<typeof monitorEventLoopDelay> | undefined
      process.on('message', (message) => {
        if (message === 'bind') void served.bind().then(() => process.send!('bound'))
        if (message === 'delay-start') {
          delay = monitorEventLoopDelay({ resolution: 1 })
          delay.enable()
          process.send!({ p99: 0, max: 0 })
        }
        if (message === 'delay-stop') {
          delay?.disable()
          process.send!({ p99: (delay?.percentile(99) ?? 0) / 1e6, max: (delay?.max ?? 0) / 1e6 })
        }
      })
      process.on('SIGTERM', () => void served.close().finally(() => process.exit(0)))
      // The benchmark process ended without stopping us (Ctrl-C, a crash): stop too.
      process.on('disconnect', () => process.exit(0))
    })
  })
}
