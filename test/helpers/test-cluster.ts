import pg from 'pg'
import type { BalancerKind } from '../../src/cluster/balancer-config.js'
import { findBalancer, LocalCluster, type LocalClusterOptions } from '../../src/cluster/local-cluster.js'
import { DIALECTS, TEST_POSTGRES_URL } from './dialects.js'
import { natsReachable, TEST_NATS_URL } from './nats.js'
import { assertBuilt, CLI } from './server-process.js'

export const CLUSTER_ADMIN = { username: 'root', password: 'root-password' }
const USERS = { root: { password: CLUSTER_ADMIN.password, role: 'admin', display_name: 'Root' } }

/** Whether the several-instance tests can run here: the load balancer (nginx unless told), PostgreSQL and NATS (each required in CI). */
export async function clusterRunnable(what: string, balancer: BalancerKind = 'nginx'): Promise<boolean> {
  if (!findBalancer(balancer)) {
    if (process.env.CI) throw new Error(`${balancer} is required in CI (apt-get install -y ${balancer}; .ci/run does it)`)
    console.warn(`\n!!! ${balancer} is not installed: SKIPPING ${what} (apt-get install -y ${balancer}) !!!\n`)
    return false
  }
  return DIALECTS.includes('postgres') && (await natsReachable(what))
}

export interface TestCluster {
  cluster: LocalCluster
  /** `Bearer …` of the cluster's administrator. */
  token: string
}

/**
 * `instances` compiled servers on a fresh PostgreSQL database and the test NATS, behind nginx
 * (or `balancer.balancer`), with an administrator signed in.
 */
export async function startTestCluster(
  instances: number,
  env: Record<string, string> = {},
  log?: (instance: string, line: string) => void,
  balancer: Pick<LocalClusterOptions, 'balancer' | 'checkTiming'> = {},
): Promise<TestCluster> {
  assertBuilt()
  const cluster = new LocalCluster({
    instances,
    postgresUrl: TEST_POSTGRES_URL,
    natsUrl: TEST_NATS_URL,
    port: 0,
    cli: CLI,
    balancer: 'nginx',
    ...balancer,
    env: { CLOUD_AUTH_USERS: JSON.stringify(USERS), LOG_LEVEL: 'warn', ...env },
    log,
  })
  try {
    await cluster.start()
  } catch (err) {
    await cluster.stop()
    throw err
  }
  const login = await fetch(`${cluster.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CLUSTER_ADMIN) })
  return { cluster, token: `Bearer ${((await login.json()) as { token: string }).token}` }
}

/** Which instance holds each device's link, as the cluster's database records it (`link_instance`). */
export async function linkHolders(cluster: LocalCluster, deviceIds: readonly string[]): Promise<Map<string, string | null>> {
  const client = new pg.Client({ connectionString: cluster.database!.url })
  await client.connect()
  try {
    const { rows } = await client.query<{ device_id: string; link_instance: string | null }>('select device_id, link_instance from devices where device_id = any($1)', [
      [...deviceIds],
    ])
    return new Map(rows.map((r) => [r.device_id, r.link_instance]))
  } finally {
    await client.end()
  }
}
