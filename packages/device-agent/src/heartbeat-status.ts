import type { AgentLog, StatusProvider } from './device-agent.js'
import { MAX_STATUS_BYTES } from './protocol/limits.js'

/**
 * The status a heartbeat carries: the provider's object, or a small one naming the problem when
 * the provider fails or its object is not JSON or is over the gateway's limit. A status over the
 * limit would close the link with 4400 (contract §4); it is reported through `tooLarge` instead.
 */
export async function heartbeatStatus(provider: StatusProvider, log: AgentLog, tooLarge: (message: string) => void): Promise<Record<string, unknown>> {
  const status = await readStatus(provider, log)
  let bytes: number
  try {
    bytes = Buffer.byteLength(JSON.stringify(status))
  } catch (err) {
    log('warn', `status is not JSON: ${(err as Error).message}`)
    return { error: 'status_unavailable' }
  }
  if (bytes <= MAX_STATUS_BYTES) return status
  const message = `heartbeat status of ${bytes} bytes of JSON is over the gateway's limit of ${MAX_STATUS_BYTES}; not sent`
  log('error', message)
  tooLarge(message)
  return { error: 'status_too_large', bytes }
}

async function readStatus(provider: StatusProvider, log: AgentLog): Promise<Record<string, unknown>> {
  try {
    const status = await provider()
    return typeof status === 'object' && status !== null ? status : { status }
  } catch (err) {
    log('warn', `status provider failed: ${(err as Error).message}`)
    return { error: 'status_unavailable' }
  }
}
