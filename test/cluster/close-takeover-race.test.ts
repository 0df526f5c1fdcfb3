import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsSuitesRunnable, TEST_NATS_URL as NATS_URL } from '../helpers/nats.js'

const runnable = await natsSuitesRunnable({ needsPostgres: true })

const ROUNDS = 10
const DEVICES_PER_ROUND = 20

/**
 * docs/coordination.md, the link holder: a link closing on one instance while its machine's new
 * link registers on another. A machine's connection drops on A and it links to B at once; A's
 * close (clearing the holder, the `device` event, the online tally) and B's claim run in either
 * order, or the old link is still up and A closes it when B's claim is announced. Whatever the
 * order, B must hold the link afterwards and every instance must say so. Three instances on one
 * PostgreSQL and NATS: C, which holds neither link, answers from the shared state. Each round
 * links 20 machines to a fresh A (five of each kind of race), races them all, then closes A
 * (which flushes its pending writes) before looking.
 */
describe.skipIf(!runnable)('a link closing on one instance while its machine re-links on another', () => {
  let database: TestDatabase
  let b: GatewayApp
  let c: GatewayApp
  const onB: RawDevice[] = []
  beforeAll(async () => {
    database = testDatabase('postgres')
    b = await startGatewayApp('postgres', { NATS_URL, INSTANCE_ID: 'race-b' }, { database })
    c = await startGatewayApp('postgres', { NATS_URL, INSTANCE_ID: 'race-c' }, { database })
  })
  afterAll(async () => {
    await Promise.all(onB.map((device) => device.close()))
    await b?.close()
    await c?.close()
    await database?.cleanup()
  })

  const get = async (gw: GatewayApp, url: string) => (await gw.app.inject({ method: 'GET', url, headers: { authorization: await gw.auth('root') } })).json()
  const holders = async (ids: string[]) =>
    new Map((await b.storage.db.selectFrom('devices').select(['device_id', 'link_instance', 'link_id']).where('device_id', 'in', ids).execute()).map((r) => [r.device_id, r.link_instance]))

  it('leaves every machine linked to the instance it re-linked to, on every instance, whichever ran first', { timeout: 120_000 }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = await startGatewayApp('postgres', { NATS_URL, INSTANCE_ID: `race-a-${round}` }, { database })
      const ids = Array.from({ length: DEVICES_PER_ROUND }, () => uniqueDeviceId('race'))
      const answer = (via: string) => () => ({ status: 200, data: { via } })
      const first = await Promise.all(ids.map((id) => RawDevice.link(a.linkUrl, { device_id: id }, answer('a'))))

      const second = await Promise.all(
        ids.map(async (id, k) => {
          const old = first[k]!
          const device = await RawDevice.open(b.linkUrl)
          device.handler = answer('b')
          switch (k % 4) {
            case 0: // the old link drops before the new one registers
              old.socket.terminate()
              await device.register({ device_id: id })
              break
            case 1: // the old link drops once the new one has sent its register frame
              await Promise.all([device.register({ device_id: id }), old.socket.terminate()])
              break
            case 2: // the old link stays up: A closes it (4409) once B's claim is announced
              await device.register({ device_id: id })
              break
            default: // and drops as B's claim commits
              await device.register({ device_id: id })
              old.socket.terminate()
          }
          return device
        }),
      )
      onB.push(...second)
      await Promise.all(first.map((device) => device.closed))
      await a.close()

      expect([...(await holders(ids)).values()]).toEqual(ids.map(() => 'race-b'))
      for (const gw of [b, c]) {
        for (const id of ids) {
          const { device } = await get(gw, `/api/v1/devices/${id}`)
          expect(device, `${id} on ${gw === b ? 'B' : 'C'}, round ${round}`).toMatchObject({ connected: true, registered: true })
          expect((await get(gw, `/api/v1/devices/${id}/hardware/position`)).data, `${id} through ${gw === b ? 'B' : 'C'}`).toEqual({ via: 'b' })
        }
        const listed = await get(gw, `/api/v1/devices?prefix=race-&counts=true&limit=500`)
        expect(listed.counts).toEqual({ total: onB.length, online: onB.length })
      }
    }
  })
})
