import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SseClient } from '../../events/sse-client.js'
import { DIALECTS } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { linkMachine, offerTo, report, startRolloutApp, type RolloutApp } from './rollout-kit.js'

describe.each(DIALECTS)('rollout events on %s', (dialect) => {
  let t: RolloutApp
  let machine: RawDevice
  const streams: SseClient[] = []

  beforeAll(async () => {
    t = await startRolloutApp(dialect)
  })
  afterAll(async () => {
    for (const s of streams) s.close()
    await machine?.close()
    await t.close()
  })

  it('tells administrators, and only them, of the rollout and of each machine change, ending with completed', async () => {
    const releaseId = await t.upload(301)
    const id = uniqueDeviceId('ev')
    machine = await linkMachine(t, id)
    const admin = await SseClient.open(`${t.url}/api/v1/events`, t.admin)
    const alice = await SseClient.open(`${t.url}/api/v1/events`, await t.auth('alice'))
    streams.push(admin, alice)

    const created = (await t.api('POST', '', { release_id: releaseId, devices: [id], stages: [100] })).body.rollout
    const first = await admin.next('rollout', (d) => d.rollout_id === created.rollout_id)
    expect(first.data).toMatchObject({ release_id: releaseId, state: 'running', stage: 0, counts: { waiting: 1 } })
    expect(typeof first.data.at).toBe('number')

    const offer = await offerTo(machine)
    const offered = await admin.next('rollout-device', (d) => d.device_id === id && d.state === 'offered')
    expect(offered.data).toMatchObject({ rollout_id: created.rollout_id, stage: 0, progress: null, error: null })
    report(machine, offer, 'downloading', { progress: 50 })
    expect((await admin.next('rollout-device', (d) => d.state === 'downloading')).data.progress).toBe(50)
    report(machine, offer, 'installed')
    await admin.next('rollout-device', (d) => d.device_id === id && d.state === 'installed')
    const done = await admin.next('rollout', (d) => d.rollout_id === created.rollout_id && d.state === 'completed')
    expect(done.data.counts).toMatchObject({ installed: 1, waiting: 0 })
    await admin.next('release', (d) => d.release_id === releaseId && d.active === true)

    expect(alice.of('rollout')).toEqual([])
    expect(alice.of('rollout-device')).toEqual([])
  })
})
