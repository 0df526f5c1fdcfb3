import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeviceAgent, RouteTable } from '@fleetgate/device-agent'
import { startSimulation, type Simulation } from '../../src/sim/simulation.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const KEY = 'production-agent-key-0123'

/** Contract §16 end to end: the SDK's production reporting against a real fleetgate, on both engines. */
describe.each(DIALECTS)('device agent production reporting against a real server on %s', (dialect) => {
  let gw: GatewayApp
  const agents: DeviceAgent[] = []
  let sim: Simulation | undefined

  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
  })
  afterAll(async () => {
    await sim?.stop()
    for (const agent of agents) await agent.close()
    await gw.close()
  })

  const stored = async (deviceId: string) =>
    (await gw.storage.db.selectFrom('production_events').select(['event_id']).where('device_id', '=', deviceId).execute()).map((r) => r.event_id).sort()
  const asRoot = async (url: string) => (await gw.app.inject({ method: 'GET', url, headers: { authorization: await gw.auth('root') } })).json()
  /** Resolves once the agent has nothing left unacknowledged. */
  const drained = async (agent: DeviceAgent) => {
    while (agent.production.queued > 0) await once(agent.production, 'acknowledged')
  }

  it('stores every event once: acknowledged events are not sent again after a re-link, the state is reported again', async () => {
    const deviceId = uniqueDeviceId('pa')
    const agent = new DeviceAgent({ url: gw.url, deviceId, key: KEY, version: '1', routes: new RouteTable(), ratedCph: 4000, backoff: { baseMs: 10, capMs: 50 } })
    agents.push(agent)
    const ids = [
      agent.production.report({ kind: 'state', state: 'productive' }),
      agent.production.report({ kind: 'job_started', job_id: 'job-1', program: 'board', boards_planned: 1 }),
      ...Array.from({ length: 1200 }, (_, i) => agent.production.report({ kind: 'placements', placed: 10, missed: i % 2, feeders: [{ feeder: 'F3', placed: 10, missed: i % 2 }] })),
      agent.production.report({ kind: 'job_ended', job_id: 'job-1', result: 'completed', boards_done: 1 }),
    ]
    agent.start()
    await once(agent, 'registered')
    await drained(agent)
    // The 1203 reported and the state reported again for the link.
    expect(agent.production.acknowledged).toBe(1204)
    expect((await stored(deviceId)).filter((id) => ids.includes(id))).toEqual([...ids].sort())
    expect((await asRoot(`/api/v1/devices/${deviceId}`)).device.rated_cph).toBe(4000)

    const stateAgain = once(agent.production, 'acknowledged')
    agent.relink()
    expect((await stateAgain)[0]).toHaveLength(1)
    expect(agent.production.acknowledged).toBe(1205)
    expect(await stored(deviceId)).toHaveLength(1205)
    expect(agent.production.rejected).toBe(0)
  })

  it('surfaces what the gateway rejects and does not keep it', async () => {
    const deviceId = uniqueDeviceId('pa')
    const agent = new DeviceAgent({ url: gw.url, deviceId, key: KEY, version: '1', routes: new RouteTable() })
    agents.push(agent)
    const old = agent.production.report({ kind: 'placements', placed: 1, missed: 0, ts: Date.now() / 1000 - 40 * 86400 })
    const rejected = once(agent.production, 'rejected')
    agent.start()
    const [info] = await rejected
    expect(info).toMatchObject({ event: { id: old }, error: expect.stringMatching(/ts|old|30 days/) })
    expect(agent.production.queued).toBe(0)
    expect(await stored(deviceId)).toEqual([])
  })

  it('the simulator registers with rated_cph and its machines report their state', async () => {
    const prefix = `${uniqueDeviceId('ps')}-`
    sim = await startSimulation({ url: gw.url, devices: 1, prefix, keysFile: null, production: { ratedCph: 6000, seed: 3 } })
    const { agent, deviceId } = sim.machines[0]!
    await sim.registered()
    await drained(agent)
    expect((await asRoot(`/api/v1/devices/${deviceId}`)).device.rated_cph).toBe(6000)
    const states = await gw.storage.db.selectFrom('production_events').selectAll().where('device_id', '=', deviceId).execute()
    expect(states.length).toBeGreaterThanOrEqual(1)
  })
})
