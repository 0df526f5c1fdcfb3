import { connect } from 'nats'
import { DIALECTS } from './dialects.js'

export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222'

/**
 * Whether the NATS suites can run. Outside CI an unreachable server (or a run narrowed to
 * SQLite, since the suites share PostgreSQL) skips them loudly; under CI=true either is a
 * failure, whatever TEST_DIALECTS says, so CI never passes without testing NATS.
 */
export async function natsSuitesRunnable(options: { needsPostgres: boolean }): Promise<boolean> {
  const problem = options.needsPostgres && !DIALECTS.includes('postgres') ? 'PostgreSQL is not among TEST_DIALECTS' : await natsProblem()
  if (!problem) return true
  if (process.env.CI) throw new Error(`The NATS suites must run in CI: ${problem}`)
  console.warn(`\n!!! Skipping the NATS suites: ${problem} !!!\n`)
  return false
}

async function natsProblem(): Promise<string | undefined> {
  try {
    await (await connect({ servers: TEST_NATS_URL, timeout: 2000 })).close()
    return undefined
  } catch {
    return `NATS at ${TEST_NATS_URL} is unreachable`
  }
}

/** True when NATS answers; in CI an unreachable NATS fails the run instead of skipping. */
export async function natsReachable(what: string): Promise<boolean> {
  const problem = await natsProblem()
  if (!problem) return true
  if (process.env.CI) throw new Error(`NATS is required in CI: ${problem}`)
  console.warn(`\n!!! ${problem}: skipping ${what} !!!\n`)
  return false
}

/**
 * `TEST_CLUSTER_KEY=<32 bytes or more>`: the instances the NATS suites start sign their messages
 * with it (`CLUSTER_KEY`), so the same suites check the signed bus.
 */
export const TEST_CLUSTER_ENV: Readonly<Record<string, string>> = process.env.TEST_CLUSTER_KEY ? { CLUSTER_KEY: process.env.TEST_CLUSTER_KEY } : {}
