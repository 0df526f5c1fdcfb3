import { connect, type ConnectionOptions, type NatsConnection } from 'nats'
import { ConfigError } from '../config/config-error.js'

/** What a caller may choose; servers, time-out and reconnection are the same for every connection. */
export type NatsOptions = Pick<ConnectionOptions, 'noEcho' | 'noAsyncTraces'>

const natsServers = (natsUrl: string) => natsUrl.split(',').map((s) => s.trim())

/**
 * Opens a connection to `NATS_URL` (a comma-separated server list) named `name` (shown by the
 * server's monitoring). Start fails after 5 s; once up, the client reconnects forever, once a
 * second. A refusal at start names NATS_URL.
 */
export async function connectNats(natsUrl: string, name: string, options: NatsOptions = {}): Promise<NatsConnection> {
  try {
    return await connect({
      servers: natsServers(natsUrl),
      name,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      ...options,
    })
  } catch (err) {
    throw new ConfigError('NATS_URL', `NATS unreachable: ${(err as Error).message}`)
  }
}

/** Checks that NATS answers, before anything is opened or created (a refusal names NATS_URL). */
export async function probeNats(natsUrl: string): Promise<void> {
  try {
    const nc = await connect({ servers: natsServers(natsUrl), name: 'fleetgate-probe', timeout: 5000, reconnect: false })
    await nc.close()
  } catch (err) {
    throw new ConfigError('NATS_URL', `NATS unreachable: ${(err as Error).message}`)
  }
}

/** Closes a connection after delivering what it holds, waiting at most 2 s for the drain. */
export async function drainNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return
  const drained = nc.drain().catch(() => undefined)
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref())
  await Promise.race([drained, timeout])
  if (!nc.isClosed()) await nc.close()
}
