import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseSimArguments, runSimCommand, startSimulation, type Simulation } from '../../src/cli/sim-command.js'
import { FakeGateway } from '../sdk/fake-gateway.js'

describe('fleetgate sim', () => {
  let gateway: FakeGateway
  let dir: string
  let simulation: Simulation | undefined

  beforeEach(async () => {
    gateway = await FakeGateway.start()
    dir = await mkdtemp(join(tmpdir(), 'fleetgate-sim-'))
  })
  afterEach(async () => {
    await simulation?.stop()
    simulation = undefined
    await gateway.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('links numbered machines that answer forwarded requests', async () => {
    simulation = await startSimulation({ url: gateway.url, devices: 2, prefix: 'line3-', keysFile: null })
    const registrations = await Promise.all([gateway.nextLink(), gateway.nextLink()].map(async (p) => {
      const link = await p
      return { link, register: await link.acceptRegistration() }
    }))
    await simulation.registered()
    expect(registrations.map((r) => r.register.device_id).sort()).toEqual(['line3-01', 'line3-02'])
    expect(registrations[0]!.register).toMatchObject({ version: '2.3.1-sim', hostname: registrations[0]!.register.device_id })
    const { link } = registrations[0]!
    link.request('q1', 'POST', '/auth/login', { username: 'operator', password: 'operator' })
    expect(await link.response('q1')).toMatchObject({ status: 200, data: { user: { username: 'operator' } } })
    link.request('q2', 'GET', '/cameras/up/frame')
    expect(await link.response('q2')).toMatchObject({ status: 200, data: { content_type: 'image/png', width: 160, height: 120 } })
  })

  it('keeps machine keys in the keys file so a restarted simulator is the same machine', async () => {
    const keysFile = join(dir, 'keys.json')
    const run = async () => {
      const sim = await startSimulation({ url: gateway.url, devices: 1, keysFile })
      const register = await (await gateway.nextLink()).acceptRegistration()
      await sim.stop()
      return register.key
    }
    const first = await run()
    const second = await run()
    expect(second).toBe(first)
    const stored = JSON.parse(await readFile(keysFile, 'utf8'))
    expect(stored.machines['pnp-01']).toBe(first)
  })

  it('refuses a keys file it cannot read rather than replacing the keys', async () => {
    const keysFile = join(dir, 'keys.json')
    await writeFile(keysFile, '{ not json')
    await expect(startSimulation({ url: gateway.url, devices: 1, keysFile })).rejects.toThrow(/not valid JSON/)
    expect(await readFile(keysFile, 'utf8')).toBe('{ not json')
  })

  it('refuses a prefix that makes invalid device ids', async () => {
    await expect(startSimulation({ url: gateway.url, devices: 1, prefix: 'a/b', keysFile: null })).rejects.toThrow(/not a valid device id/)
  })
})

describe('fleetgate sim arguments', () => {
  it('has the defaults of contract §9', () => {
    expect(parseSimArguments([], {})).toEqual({
      url: 'http://127.0.0.1:8080',
      devices: 3,
      prefix: 'pnp-',
      operators: [{ username: 'operator', password: 'operator' }],
      platform: 0,
      consoleToken: undefined,
      enrollToken: undefined,
      keysFile: '.sim-keys.json',
      failFirmware: [],
      production: { missRate: 0.003, badFeeders: [], ratedCph: 4000, autoJobs: false, seed: undefined },
    })
  })

  it('reads --fail-firmware as comma-separated machine ids, repeatable, and refuses ids it does not simulate', () => {
    expect(parseSimArguments(['--fail-firmware', 'pnp-01, pnp-03,', '--fail-firmware', 'pnp-02,pnp-01'], {})).toMatchObject({ failFirmware: ['pnp-01', 'pnp-03', 'pnp-02'] })
    expect(parseSimArguments(['--prefix', 'smt-', '--devices', '5', '--fail-firmware', 'smt-05'], {})).toMatchObject({ failFirmware: ['smt-05'] })
    expect(parseSimArguments(['--fail-firmware', 'pnp-04'], {})).toEqual({ error: expect.stringMatching(/--fail-firmware: "pnp-04" is not one of the simulated machines/) })
    expect(parseSimArguments(['--devices', '12', '--fail-firmware', 'pnp-1'], {})).toEqual({ error: expect.stringMatching(/"pnp-1"/) })
  })

  it('reads every option, repeatable operators, and the console token from the environment', () => {
    const args = parseSimArguments(
      ['--url', 'https://gw.example.com', '--devices', '5', '--prefix', 'smt-', '--operator', 'ann:pw:with:colons', '--operator', 'bob:x', '--platform', '2', '--keys-file', 'k.json'],
      { PLATFORM_CONSOLE_TOKEN: 'env-token' },
    )
    expect(args).toMatchObject({
      url: 'https://gw.example.com',
      devices: 5,
      prefix: 'smt-',
      operators: [
        { username: 'ann', password: 'pw:with:colons' },
        { username: 'bob', password: 'x' },
      ],
      platform: 2,
      consoleToken: 'env-token',
      keysFile: 'k.json',
    })
  })

  it('explains bad arguments and exits with 2', async () => {
    expect(parseSimArguments(['--devices', 'many'])).toEqual({ error: expect.stringMatching(/--devices/) })
    expect(parseSimArguments(['--operator', 'nopassword'])).toEqual({ error: expect.stringMatching(/USER:PASS/) })
    expect(parseSimArguments(['--url', 'localhost:8080'])).toEqual({ error: expect.stringMatching(/--url/) })
    expect(parseSimArguments(['--bogus'])).toHaveProperty('error')
    const original = console.error
    console.error = () => undefined
    try {
      expect(await runSimCommand(['--devices', '-1'])).toBe(2)
    } finally {
      console.error = original
    }
  })
})
