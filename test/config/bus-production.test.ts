import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { assertBuilt, runCli } from '../helpers/server-process.js'
import { busProductionProblems, loadConfig } from '../../src/config/config.js'
import { configError } from '../helpers/config-error.js'

const KEY = 'c'.repeat(32)
/** Production settings other refusals ask for, so that only the bus's are left to fail. */
const PRODUCTION = {
  NODE_ENV: 'production',
  CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'a-long-production-password', role: 'admin' } }),
  PLATFORM_REQUIRE_DEVICE_TOKEN: 'true',
  DEVICE_ENROLL_TOKEN: 'enroll-token-of-the-fleet',
  CLOUD_JWT_SECRET: 'j'.repeat(48),
  PLATFORM_CONSOLE_TOKEN: 't'.repeat(40),
}

describe('production settings of the bus between instances (§17)', () => {
  it.each([
    ['a NATS_URL without credentials', { NATS_URL: 'nats://10.0.0.1:4222', CLUSTER_KEY: KEY }, 'NATS_URL'],
    ['a NATS_URL of several servers without credentials', { NATS_URL: 'nats://10.0.0.1:4222,nats://10.0.0.2:4222', CLUSTER_KEY: KEY }, 'NATS_URL'],
    ['NATS_URL set and CLUSTER_KEY unset', { NATS_URL: 'nats://fg:pw@10.0.0.1:4222' }, 'CLUSTER_KEY'],
    ['a CLUSTER_KEY shorter than 32 bytes', { NATS_URL: 'nats://fg:pw@10.0.0.1:4222', CLUSTER_KEY: 'c'.repeat(31) }, 'CLUSTER_KEY'],
  ])('refuses to start with %s, naming the variable', (_case, env, variable) => {
    const err = configError({ ...PRODUCTION, ...env })
    expect(err.variable).toBe(variable)
    expect(err.message.startsWith(variable)).toBe(true)
    expect(err.message).not.toContain('\n')
    expect(err.message).not.toContain('pw@')
  })

  it.each([
    ['user and password in NATS_URL', { NATS_URL: 'nats://fg:pw@10.0.0.1:4222' }],
    ['a token in NATS_URL', { NATS_URL: 'tls://t0ken@nats.internal:4222' }],
    ['NATS_CREDS', { NATS_URL: 'nats://10.0.0.1:4222', NATS_CREDS: '/etc/fleetgate/nats.creds' }],
  ])('starts with %s and a CLUSTER_KEY', (_case, env) => {
    const config = loadConfig({ ...PRODUCTION, ...env, CLUSTER_KEY: KEY })
    expect(config.clusterKey).toBe(KEY)
    expect(busProductionProblems({ ...env, CLUSTER_KEY: KEY })).toEqual([])
  })

  it('asks nothing of the bus without NATS_URL, nor outside production (but a key shorter than 32 bytes is refused anywhere)', () => {
    expect(busProductionProblems({})).toEqual([])
    expect(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222' }).clusterKey).toBeUndefined()
    expect(configError({ NATS_URL: 'nats://127.0.0.1:4222', CLUSTER_KEY: 'short' }).variable).toBe('CLUSTER_KEY')
  })

  it('counts bytes, not characters, in CLUSTER_KEY', () => {
    expect(busProductionProblems({ NATS_URL: 'nats://fg:pw@h:4222', CLUSTER_KEY: 'é'.repeat(16) })).toEqual([])
    expect(busProductionProblems({ NATS_URL: 'nats://fg:pw@h:4222', CLUSTER_KEY: 'é'.repeat(15) })).toHaveLength(1)
  })
})

describe('fleetgate serve in production with NATS_URL', () => {
  it.each([
    ['a NATS_URL without credentials', { NATS_URL: 'nats://127.0.0.1:4222', CLUSTER_KEY: KEY }, 'NATS_URL'],
    ['no CLUSTER_KEY', { NATS_URL: 'nats://fg:pw@127.0.0.1:4222' }, 'CLUSTER_KEY'],
  ])('refuses to start with %s: one line naming %s, exit 1', async (_case, env, variable) => {
    assertBuilt()
    const run = runCli(['serve'], { ...PRODUCTION, DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'fg-bus-')), 'data'), ...env })
    expect(await run.exited).toBe(1)
    expect(run.err().trim().split('\n')).toHaveLength(1)
    expect(run.err()).toMatch(new RegExp(`^fleetgate: invalid configuration: ${variable}: `))
  })
})
