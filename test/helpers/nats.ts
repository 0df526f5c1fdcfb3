import { connect } from 'nats'

export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222'

/** True when NATS answers; in CI an unreachable NATS fails the run instead of skipping. */
export async function natsReachable(what: string): Promise<boolean> {
  try {
    await (await connect({ servers: TEST_NATS_URL, timeout: 2000 })).close()
    return true
  } catch {
    if (process.env.CI) throw new Error(`NATS is required in CI but ${TEST_NATS_URL} is unreachable`)
    console.warn(`\n!!! NATS at ${TEST_NATS_URL} is unreachable: skipping ${what} !!!\n`)
    return false
  }
}
