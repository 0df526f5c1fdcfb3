import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProductionStore } from '../../../src/gateway/production/ingest/production-store.js'
import { DIALECTS } from '../../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../helpers/gateway-app.js'
import { insertMachine } from './production-rows.js'

/**
 * `state` of one machine's figures (fleetgate addition to §16): its current state as the ingest
 * side keeps it, so the console can show it before any `machine-state` event arrives.
 */
describe.each(DIALECTS)('a machine’s current state over the API on %s', (dialect) => {
  let gw: GatewayApp
  let store: ProductionStore
  const now = Math.floor(Date.now() / 1000)

  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    store = new ProductionStore(gw.storage)
    for (const id of ['cs-silent', 'cs-states', 'cs-closed']) await insertMachine(gw.storage.db, id, null)
  })
  afterAll(async () => {
    await gw?.close()
  })

  async function stateOf(deviceId: string, query = '') {
    const res = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${deviceId}/production${query}`, headers: { authorization: await gw.auth('root') } })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().state
  }

  it('is null for a machine that never reported a state', async () => {
    expect(await stateOf('cs-silent')).toBeNull()
  })

  it('is the newest state by ts, whatever the window; a late older event does not change it', async () => {
    await store.storeFrame('cs-states', [
      { id: 'a', ts: now - 600, kind: 'state', state: 'productive' },
      { id: 'b', ts: now - 300, kind: 'state', state: 'unscheduled_down', reason: 'feeder jam' },
    ] as never)
    expect(await stateOf('cs-states')).toEqual({ state: 'unscheduled_down', reason: 'feeder jam', since: now - 300 })
    const late = await store.storeFrame('cs-states', [{ id: 'c', ts: now - 450, kind: 'state', state: 'standby' }] as never)
    expect(late.rejected).toEqual([])
    expect(await stateOf('cs-states')).toEqual({ state: 'unscheduled_down', reason: 'feeder jam', since: now - 300 })
    // The window is about figures only: a window that ended before the state began answers it too.
    expect(await stateOf('cs-states', `?from=${now - 7200}&to=${now - 3600}`)).toEqual({ state: 'unscheduled_down', reason: 'feeder jam', since: now - 300 })
  })

  it('is offline, without a reason, after the machine’s link closed', async () => {
    await store.storeFrame('cs-closed', [{ id: 'a', ts: now - 60, kind: 'state', state: 'productive', reason: 'job 7' }] as never)
    expect(await stateOf('cs-closed')).toEqual({ state: 'productive', reason: 'job 7', since: now - 60 })
    const closed = await store.linkClosed('cs-closed', 0)
    expect(closed?.state).toBe('offline')
    expect(await stateOf('cs-closed')).toEqual({ state: 'offline', reason: null, since: closed!.since })
  })
})
