import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'

/**
 * Issue #32, item 2: a registration whose claim cannot be written in time gives up, and the claim
 * must then never commit: committed later, it would bump the device's generation with no link
 * behind it, and the instance holding the device's live link would close it with 4409. Two
 * instances on one PostgreSQL database; a transaction of the test holds the device's row, so the
 * second instance's claim waits on it past its time-out.
 */
describe.runIf(DIALECTS.includes('postgres'))('a claim delayed past its time-out', () => {
  let database: TestDatabase
  let holder: GatewayApp
  let late: GatewayApp
  const CLAIM_TIMEOUT_MS = 300

  beforeAll(async () => {
    database = testDatabase('postgres')
    holder = await startGatewayApp('postgres', {}, { database, deviceLink: { fenceCheckMs: 50 } })
    late = await startGatewayApp('postgres', {}, { database, deviceLink: { claimTimeoutMs: CLAIM_TIMEOUT_MS } })
  })
  afterAll(async () => {
    await late?.close()
    await holder?.close()
    await database?.cleanup()
  })

  const recordOf = (deviceId: string) =>
    holder.storage.db.selectFrom('devices').select(['link_generation', 'link_instance', 'link_id']).where('device_id', '=', deviceId).executeTakeFirstOrThrow()
  /** Statements of the other instance still waiting on a lock (the claim, before the fix, after its time-out). */
  const waitingClaims = async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state = 'active' and wait_event_type = 'Lock' and query ilike 'with "claim"%'`.execute(holder.storage.db)
    return rows[0]!.n
  }

  it('is never written: the live link on the other instance stays open, its generation unchanged', async () => {
    const deviceId = uniqueDeviceId('delayed')
    const live = await RawDevice.link(holder.linkUrl, { device_id: deviceId })
    const before = await recordOf(deviceId)

    let releaseRow!: () => void
    const rowReleased = new Promise<void>((resolve) => (releaseRow = resolve))
    let rowHeld!: () => void
    const held = new Promise<void>((resolve) => (rowHeld = resolve))
    const blocker = holder.storage.db.transaction().execute(async (trx) => {
      await trx.selectFrom('devices').select('device_id').where('device_id', '=', deviceId).forUpdate().execute()
      rowHeld()
      await rowReleased
    })
    await held

    const second = await RawDevice.open(late.linkUrl)
    await expect(second.register({ device_id: deviceId })).rejects.toThrow(/closed 1011/)
    releaseRow()
    await blocker
    // Whatever the claim's statement was going to do, it has done it now.
    await expect.poll(waitingClaims, { timeout: 5000 }).toBe(0)

    expect(await recordOf(deviceId)).toEqual(before)
    // The holder's fence check runs every 50 ms; a request through the live link proves it is still open and answering.
    const answer = await fetch(`${holder.url}/api/v1/devices/${deviceId}/hardware/position`, { headers: { authorization: await holder.auth('root') } })
    expect(answer.status).toBe(200)
    expect(live.socket.readyState).toBe(live.socket.OPEN)
    await live.close()
    await second.close()
  })
})
