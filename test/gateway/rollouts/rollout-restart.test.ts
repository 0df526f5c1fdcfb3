import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { isOffer, linkMachine, offerTo, report, startRolloutApp, type RolloutApp } from './rollout-kit.js'


describe.each(DIALECTS)('a rollout across a server restart on %s', (dialect) => {
  const databases: TestDatabase[] = []
  const open: { machines: RawDevice[]; apps: RolloutApp[] } = { machines: [], apps: [] }
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-rollout-'))

  afterAll(async () => {
    await Promise.all(open.machines.map((m) => m.close()))
    for (const app of open.apps) await app.close()
    for (const database of databases) await database.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('carries on where it was: installed machines are not offered again, offered ones report on their new link', async () => {
    const database = testDatabase(dialect, path.join(dir, 'fleetgate.db'))
    databases.push(database)
    const first = await startRolloutApp(dialect, {}, database)
    open.apps.push(first)
    const releaseId = await first.upload(401)
    const ids = [uniqueDeviceId('rs'), uniqueDeviceId('rs'), uniqueDeviceId('rs')]
    const before = await Promise.all(ids.map((id) => linkMachine(first, id)))
    open.machines.push(...before)
    const rolloutId = (await first.api('POST', '', { release_id: releaseId, devices: ids, stages: [100] })).body.rollout.rollout_id
    const offers = await Promise.all(before.map((m) => offerTo(m)))
    report(before[0]!, offers[0]!, 'installed')
    report(before[1]!, offers[1]!, 'downloading', { progress: 30 })
    await expect
      .poll(async () => (await first.api('GET', `/${rolloutId}`)).body.rollout.counts, { timeout: 5000 })
      .toMatchObject({ installed: 1, downloading: 1, offered: 1 })
    await first.close()

    const second = await startRolloutApp(dialect, {}, database)
    open.apps.push(second)
    const after = await Promise.all(ids.map((id) => linkMachine(second, id)))
    open.machines.push(...after)
    // Reports for the offer made by the first server are taken on the new links.
    report(after[1]!, offers[1]!, 'installed')
    report(after[2]!, offers[2]!, 'failed', { error: 'checksum mismatch' })
    await expect.poll(async () => (await second.api('GET', `/${rolloutId}`)).body.rollout.state, { timeout: 5000 }).toBe('paused')
    const rows = (await second.api('GET', `/${rolloutId}`)).body.devices
    expect(Object.fromEntries(rows.map((d: { device_id: string; state: string }) => [d.device_id, d.state]))).toEqual({
      [ids[0]!]: 'installed',
      [ids[1]!]: 'installed',
      [ids[2]!]: 'failed',
    })
    expect(after.flatMap((m) => m.received.filter(isOffer))).toEqual([])
  })

  it('offers again, after a task check, to a machine that linked again without answering an offer it may never have received', async () => {
    const app = await startRolloutApp(dialect)
    open.apps.push(app)
    const releaseId = await app.upload(402)
    const id = uniqueDeviceId('lost')
    const first = await linkMachine(app, id)
    open.machines.push(first)
    const rolloutId = (await app.api('POST', '', { release_id: releaseId, devices: [id], stages: [100] })).body.rollout.rollout_id
    await offerTo(first)
    await first.close()
    // As if the offer was recorded long ago by an instance killed before the frame left.
    await app.storage.db
      .updateTable('rollout_devices')
      .set((eb) => ({ offered_at: eb('offered_at', '-', 60), last_report_at: eb('offered_at', '-', 60) }))
      .where('device_id', '=', id)
      .execute()
    const again = await linkMachine(app, id)
    open.machines.push(again)
    const offer = await offerTo(again)
    expect(again.requests.some((r) => r.path === '/tasks/current')).toBe(true)
    report(again, offer, 'installed')
    await expect.poll(async () => (await app.api('GET', `/${rolloutId}`)).body.rollout.state, { timeout: 5000 }).toBe('completed')
  })
})
