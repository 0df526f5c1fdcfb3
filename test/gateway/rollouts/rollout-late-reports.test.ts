import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { linkMachine, metricSample, offerTo, report, startRolloutApp, type RolloutApp } from './rollout-kit.js'

/**
 * Issue #32, item 4: a report moves a machine only from a state that may lead to the reported
 * one. A machine put back to waiting (its offer presumed lost with an old link) must not be taken
 * out of the queue by a late frame of that old offer.
 */
describe.each(DIALECTS)('late reports of an old offer on %s', (dialect) => {
  let t: RolloutApp
  const machines: RawDevice[] = []

  beforeAll(async () => {
    t = await startRolloutApp(dialect)
  })
  afterAll(async () => {
    await Promise.all(machines.map((m) => m.close()))
    await t.close()
  })

  const ignoredReports = () => metricSample(t, 'fleetgate_rollout_ignored_reports_total{reason="not_offered_or_ended"}')
  const stateOf = async (rolloutId: string, deviceId: string) =>
    (await t.storage.db.selectFrom('rollout_devices').select('state').where('rollout_id', '=', rolloutId).where('device_id', '=', deviceId).executeTakeFirstOrThrow()).state

  it('leaves a re-queued machine waiting when a report of its old offer arrives late', async () => {
    const releaseId = await t.upload(801)
    const id = uniqueDeviceId('late')
    const machine = await linkMachine(t, id)
    machines.push(machine)
    const rolloutId = (await t.api('POST', '', { release_id: releaseId, devices: [id], stages: [100] })).body.rollout.rollout_id
    const offer = await offerTo(machine)
    // As the requeue of a lost offer leaves it: waiting again, not to be tried for a while.
    await t.storage.db.updateTable('rollout_devices').set({ state: 'waiting', next_try_at: 9e12 }).where('rollout_id', '=', rolloutId).where('device_id', '=', id).execute()
    const before = await ignoredReports()
    report(machine, offer, 'downloading', { progress: 20 })
    await expect.poll(ignoredReports, { timeout: 5000 }).toBe(before + 1)
    expect(await stateOf(rolloutId, id)).toBe('waiting')
    report(machine, offer, 'installed')
    await expect.poll(ignoredReports, { timeout: 5000 }).toBe(before + 2)
    expect(await stateOf(rolloutId, id)).toBe('waiting')
  })
})
