import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DIALECTS } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { isOffer, linkMachine, metricSample, offerTo, report, startRolloutApp, tallyMismatches, type RolloutApp } from './rollout-kit.js'


describe.each(DIALECTS)('a rollout driving linked machines on %s', (dialect) => {
  let t: RolloutApp
  const machines: RawDevice[] = []
  const link = async (id: string, state?: () => string | null) => {
    const m = await linkMachine(t, id, state)
    machines.push(m)
    return m
  }
  const detail = async (id: string) => (await t.api('GET', `/${id}`)).body
  const machineState = async (rolloutId: string, deviceId: string) =>
    ((await detail(rolloutId)).devices as { device_id: string; state: string }[]).find((d) => d.device_id === deviceId)?.state

  // An app of its own for each test: one test's leftovers (an active rollout) cannot fail the next.
  beforeEach(async () => {
    t = await startRolloutApp(dialect, { ROLLOUT_STEP_TIMEOUT_SECONDS: '1' })
  })
  afterEach(async () => {
    await Promise.all(machines.splice(0).map((m) => m.close()))
    // Whatever the test did, the tallies kept by the transitions are the machines counted.
    expect(await tallyMismatches(t)).toEqual([])
    await t.close()
  })
  const busyTries = () => metricSample(t, 'fleetgate_rollout_busy_total{reason="task"}')

  it('offers only to an idle machine, takes its reports in order and completes, activating the release', async () => {
    const releaseId = await t.upload(101)
    let task: string | null = 'running'
    const busy = await link(uniqueDeviceId('busy'), () => task)
    const idle = await link(uniqueDeviceId('idle'))
    const created = await t.api('POST', '', { release_id: releaseId, devices: [deviceIdOf(idle), deviceIdOf(busy)], stages: [100] })
    expect(created.status).toBe(201)
    const rollout = created.body.rollout
    expect(rollout).toMatchObject({ release_id: releaseId, state: 'running', stage: 0, stages: [100], targeted: 2, max_failure_ratio: 0.1, soak_seconds: 0 })

    const offer = await offerTo(idle)
    expect(offer).toMatchObject({
      rollout_id: rollout.rollout_id,
      release_id: releaseId,
      image_version: 101,
      url: `/api/v1/firmware/slave/releases/${releaseId}/system.bin`,
    })
    expect(offer.sha256).toMatch(/^[0-9a-f]{64}$/)
    // The busy machine was asked for its task, the try was decided busy, and no offer followed.
    await expect.poll(busyTries, { timeout: 5000 }).toBeGreaterThan(0)
    expect(busy.requests.some((r) => r.path === '/tasks/current')).toBe(true)
    expect(busy.received.some(isOffer)).toBe(false)

    report(idle, offer, 'downloading', { progress: 40 })
    report(idle, offer, 'installing', { progress: 10 })
    report(idle, offer, 'installed')
    await expect.poll(() => machineState(rollout.rollout_id, deviceIdOf(idle)), { timeout: 5000 }).toBe('installed')

    task = 'done'
    const second = await offerTo(busy)
    report(busy, second, 'installed')
    await expect.poll(async () => (await detail(rollout.rollout_id)).rollout.state, { timeout: 5000 }).toBe('completed')
    const releases = (await (await fetch(`${t.url}/api/v1/admin/firmware/slave/releases`, { headers: { authorization: t.admin } })).json()) as {
      releases: { release_id: string; state: string }[]
    }
    expect(releases.releases.find((r) => r.release_id === releaseId)?.state).toBe('active')
    // Nothing is offered again to machines that installed it.
    expect(idle.received.filter(isOffer)).toHaveLength(1)
  })

  it('pauses by itself when a stage fails too often, and a resume carries on to the next stage', async () => {
    const releaseId = await t.upload(102)
    const ids = [uniqueDeviceId('f'), uniqueDeviceId('f'), uniqueDeviceId('f'), uniqueDeviceId('f')]
    const linked = await Promise.all(ids.map((id) => link(id)))
    const created = await t.api('POST', '', { release_id: releaseId, devices: ids, stages: [50, 100], max_failure_ratio: 0.4 })
    expect(created.status).toBe(201)
    const rolloutId = created.body.rollout.rollout_id
    const first = (await detail(rolloutId)).devices.filter((d: { stage: number }) => d.stage === 0)
    expect(first).toHaveLength(2)
    for (const [i, d] of first.entries()) {
      const m = linked[ids.indexOf(d.device_id)]!
      const offer = await offerTo(m)
      report(m, offer, i === 0 ? 'failed' : 'installed', i === 0 ? { error: 'flash write failed' } : {})
    }
    // 1 failed of 2 = 0.5 > 0.4
    await expect.poll(async () => (await detail(rolloutId)).rollout.state, { timeout: 5000 }).toBe('paused')
    const rows = (await detail(rolloutId)).devices
    expect(rows.find((d: { error: string | null }) => d.error === 'flash write failed')?.state).toBe('failed')
    expect(rows.filter((d: { stage: number; state: string }) => d.stage === 1).map((d: { state: string }) => d.state)).toEqual(['pending', 'pending'])

    const resumed = await t.api('POST', `/${rolloutId}/resume`)
    expect(resumed.status).toBe(200)
    expect(resumed.body.rollout.state).toBe('running')
    for (const d of rows.filter((r: { stage: number }) => r.stage === 1)) {
      const m = linked[ids.indexOf(d.device_id)]!
      report(m, await offerTo(m), 'installed')
    }
    await expect.poll(async () => (await detail(rolloutId)).rollout.state, { timeout: 5000 }).toBe('completed')
    expect((await t.api('POST', `/${rolloutId}/pause`)).status).toBe(409)
  })

  it('opens the next stage only after soak_seconds, and its machines are then offered at once', async () => {
    const releaseId = await t.upload(104)
    const ids = [uniqueDeviceId('soak'), uniqueDeviceId('soak')]
    const linked = await Promise.all(ids.map((id) => link(id)))
    const created = await t.api('POST', '', { release_id: releaseId, devices: ids, stages: [50, 100], soak_seconds: 1.5 })
    const rolloutId = created.body.rollout.rollout_id
    const first = (await detail(rolloutId)).devices[0].device_id as string
    const firstMachine = linked[ids.indexOf(first)]!
    const secondMachine = linked[1 - ids.indexOf(first)]!
    report(firstMachine, await offerTo(firstMachine), 'installed')
    const second = await offerTo(secondMachine)
    expect((await detail(rolloutId)).rollout.stage).toBe(1)
    // The soak, by the times the gateway recorded (the database's clock), not this test's clock.
    const installedAt = (await t.storage.db.selectFrom('rollout_devices').select('updated_at').where('rollout_id', '=', rolloutId).where('device_id', '=', first).executeTakeFirstOrThrow()).updated_at
    const stageOpenedAt = (await t.storage.db.selectFrom('rollouts').select('stage_opened_at').where('rollout_id', '=', rolloutId).executeTakeFirstOrThrow()).stage_opened_at
    expect(Number(stageOpenedAt) - Number(installedAt)).toBeGreaterThanOrEqual(1.5)
    report(secondMachine, second, 'installed')
    await expect.poll(async () => (await detail(rolloutId)).rollout.state, { timeout: 5000 }).toBe('completed')
  })

  it('fails a machine silent past the step time-out, and the stage still ends', async () => {
    const releaseId = await t.upload(103)
    const id = uniqueDeviceId('silent')
    const m = await link(id)
    const created = await t.api('POST', '', { release_id: releaseId, devices: [id], stages: [100], max_failure_ratio: 1 })
    const rolloutId = created.body.rollout.rollout_id
    const offer = await offerTo(m)
    report(m, offer, 'downloading', { progress: 5 })
    await m.close()
    await expect.poll(() => machineState(rolloutId, id), { timeout: 8000 }).toBe('failed')
    const end = await detail(rolloutId)
    expect(end.devices[0].error).toMatch(/no report/)
    await expect.poll(async () => (await detail(rolloutId)).rollout.state, { timeout: 5000 }).toBe('completed')
  })

  it('after an abort, takes the reports of a machine still installing, and fails one that falls silent', async () => {
    const releaseId = await t.upload(105)
    const [finishing, silent] = [uniqueDeviceId('ab'), uniqueDeviceId('ab')]
    const machinesOf = await Promise.all([finishing, silent].map((id) => link(id)))
    const created = await t.api('POST', '', { release_id: releaseId, devices: [finishing, silent], stages: [100] })
    const rolloutId = created.body.rollout.rollout_id
    const offers = await Promise.all(machinesOf.map((m) => offerTo(m)))
    machinesOf.forEach((m, i) => report(m, offers[i]!, 'downloading', { progress: 10 }))
    await expect.poll(async () => (await detail(rolloutId)).rollout.counts.downloading, { timeout: 5000 }).toBe(2)
    expect((await t.api('POST', `/${rolloutId}/abort`)).body.rollout.state).toBe('aborted')
    report(machinesOf[0]!, offers[0]!, 'installed')
    await expect.poll(() => machineState(rolloutId, finishing), { timeout: 5000 }).toBe('installed')
    await expect.poll(() => machineState(rolloutId, silent), { timeout: 8000 }).toBe('failed')
    expect((await detail(rolloutId)).rollout.state).toBe('aborted')
  })

  it('ignores reports for a rollout never offered to the machine, and closes the link on a malformed one', async () => {
    const id = uniqueDeviceId('stray')
    const m = await link(id)
    const metrics = async () => (await (await fetch(`${t.url}/metrics`)).text()).match(/fleetgate_rollout_ignored_reports_total\{[^}]*\} (\d+)/)?.[1] ?? '0'
    const before = Number(await metrics())
    m.send({ type: 'firmware-status', rollout_id: 'ro-none', release_id: 'r-x', state: 'installed' })
    await expect.poll(async () => Number(await metrics()), { timeout: 5000 }).toBe(before + 1)
    m.send({ type: 'firmware-status', rollout_id: 'ro-none', release_id: 'r-x', state: 'exploded' })
    expect((await m.closed).code).toBe(4400)
  })
})

/** The id a raw machine registered with (its first frame). */
function deviceIdOf(m: RawDevice): string {
  return (m.received.find((f) => f.type === 'registered') as { device_id: string }).device_id
}
