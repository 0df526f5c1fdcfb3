/**
 * The device side of each proxy contender, in its own process: it parses the request, answers
 * the position and serialises the answer as JSON, whatever the transport. The fleetgate device
 * is the SDK's DeviceAgent (what a machine embeds); the MQTT and NATS devices use their
 * clients directly.
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

export const POSITION = { x: 120.5, y: 80.25, z: 10, r: 90 }

export type DeviceJob =
  | { kind: 'link'; url: string; deviceId: string; key: string }
  | { kind: 'mqtt'; url: string; topic: string }
  | { kind: 'nats'; url: string; subject: string }

const HERE = fileURLToPath(import.meta.url)

export interface DeviceProcess {
  pid: number
  /** CPU time (user + system) the device process used so far, in µs. */
  cpu(): Promise<number>
  stop(): Promise<void>
}

/**
 * Starts a device process; resolves once it is linked/subscribed. `wrapper`: a command that runs
 * Node, such as valgrind with its options.
 */
export async function startDevice(job: DeviceJob, wrapper: string[] = []): Promise<DeviceProcess> {
  const child = fork(HERE, ['--device-child'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(wrapper.length > 0 && { execPath: wrapper[0], execArgv: [...wrapper.slice(1), process.execPath] }),
  })
  child.send(job)
  const [message] = (await once(child, 'message')) as [{ ready: true } | { error: string }]
  if ('error' in message) throw new Error(`device process: ${message.error}`)
  return {
    pid: child.pid!,
    async cpu() {
      child.send('cpu')
      const [reply] = (await once(child, 'message')) as [{ cpu: number }]
      return reply.cpu
    },
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

async function linkDevice(job: Extract<DeviceJob, { kind: 'link' }>): Promise<void> {
  const { DeviceAgent, ok, RouteTable } = await import('@fleetgate/device-agent')
  const routes = new RouteTable().get('/hardware/position', () => ok(POSITION))
  const agent = new DeviceAgent({ url: job.url, deviceId: job.deviceId, key: job.key, version: 'bench', routes, maxConcurrentRequests: 64 })
  const registered = once(agent, 'registered')
  agent.start()
  await registered
}

async function mqttDevice(job: Extract<DeviceJob, { kind: 'mqtt' }>): Promise<void> {
  const { connectAsync } = await import('mqtt')
  const client = await connectAsync(job.url, { clean: true, reconnectPeriod: 0 })
  client.on('message', (_topic, payload) => {
    const request = JSON.parse(payload.toString()) as { id: number; reply: string; path: string }
    const status = request.path === '/hardware/position' ? 200 : 404
    client.publish(request.reply, JSON.stringify({ id: request.id, status, data: POSITION }), { qos: 0 })
  })
  await client.subscribeAsync(job.topic, { qos: 0 })
}

async function natsDevice(job: Extract<DeviceJob, { kind: 'nats' }>): Promise<void> {
  const { connect } = await import('nats')
  const nc = await connect({ servers: job.url })
  nc.subscribe(job.subject, {
    callback: (err, msg) => {
      if (err) return
      const request = JSON.parse(msg.string()) as { path: string }
      const status = request.path === '/hardware/position' ? 200 : 404
      msg.respond(JSON.stringify({ status, data: POSITION }))
    },
  })
  await nc.flush()
}

if (process.argv[2] === '--device-child') {
  process.on('message', (message: DeviceJob | 'cpu') => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage()
      return void process.send!({ cpu: user + system })
    }
    const job = message
    const start = job.kind === 'link' ? linkDevice(job) : job.kind === 'mqtt' ? mqttDevice(job) : natsDevice(job)
    start.then(
      () => process.send!({ ready: true }),
      (err: Error) => process.send!({ error: err.message }, () => process.exit(1)),
    )
  })
  process.on('SIGTERM', () => process.exit(0))
  // The benchmark process ended without stopping us (Ctrl-C, a crash): stop too.
  process.on('disconnect', () => process.exit(0))
}
