import { LocalCluster } from '../cluster/local-cluster.js'

const USAGE = `usage: fleetgate cluster [--instances 3] [--port 8080] [--host 127.0.0.1] [--balancer haproxy|nginx]

Starts N instances on a database of their own (created on the PostgreSQL server of
CLUSTER_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres, dropped at the end)
and the NATS server of NATS_URL (default nats://127.0.0.1:4222), behind HAProxy (default) or
nginx configured from deploy/. Other fleetgate variables in the environment are passed to every
instance; behind HAProxy, SHUTDOWN_DRAIN_SECONDS defaults to 5 (rolling restarts lose nothing).
Ctrl-C stops everything.`

function numberOption(args: string[], name: string, fallback: number, min: number): number {
  const i = args.indexOf(`--${name}`)
  if (i < 0) return fallback
  const value = Number(args[i + 1])
  if (!Number.isInteger(value) || value < min || value > 65535) throw new Error(`--${name} must be a whole number ≥ ${min}`)
  return value
}

/** `fleetgate cluster` (npm run cluster): a local several-instance deployment for trying §13. */
export async function runClusterCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  let instances: number
  let port: number
  try {
    instances = numberOption(args, 'instances', 3, 1)
    port = numberOption(args, 'port', 8080, 0)
  } catch (err) {
    console.error(`fleetgate cluster: ${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const hostIndex = args.indexOf('--host')
  const host = hostIndex >= 0 ? args[hostIndex + 1]! : '127.0.0.1'
  const balancerIndex = args.indexOf('--balancer')
  const balancer = balancerIndex >= 0 ? args[balancerIndex + 1] : 'haproxy'
  if (balancer !== 'haproxy' && balancer !== 'nginx') {
    console.error(`fleetgate cluster: --balancer must be haproxy or nginx\n${USAGE}`)
    return 2
  }
  const { DATABASE_URL: _db, NATS_URL: natsUrl, PORT: _port, HOST: _host, INSTANCE_ID: _id, ...passed } = process.env
  const cluster = new LocalCluster({
    instances,
    postgresUrl: process.env.CLUSTER_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    natsUrl: natsUrl ?? 'nats://127.0.0.1:4222',
    port,
    host,
    balancer,
    env: { LOG_LEVEL: 'info', TRUST_PROXY: '127.0.0.1', ...(passed as Record<string, string>) },
    log: (instance, line) => console.log(`[${instance}] ${line}`),
  })
  let stopping: Promise<void> | undefined
  const stop = () => (stopping ??= cluster.stop())
  const done = new Promise<number>((resolve) => {
    const onSignal = () => {
      console.log('\nstopping the cluster…')
      stop().then(
        () => resolve(0),
        (err: Error) => {
          console.error(`fleetgate cluster: ${err.message}`)
          resolve(1)
        },
      )
    }
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
  })
  try {
    await cluster.start()
  } catch (err) {
    await stop()
    console.error(`fleetgate cluster: ${(err as Error).message}`)
    return 1
  }
  console.log(`\nfleetgate: ${instances} instance(s) behind ${balancer} at ${cluster.url}`)
  for (const i of cluster.instances) console.log(`  ${i.id}  ${i.url}`)
  console.log(`  database ${cluster.database!.name}; Ctrl-C stops everything\n`)
  return done
}
