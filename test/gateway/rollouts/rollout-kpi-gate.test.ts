import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Db } from '../../../src/storage/storage.js'
import { SseClient } from '../../events/sse-client.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { insertEvent } from '../production/production-rows.js'
import { linkMachine, offerTo, report, startRolloutApp, type RolloutApp } from './rollout-kit.js'

const nowS = () => Date.now() / 1000

/** `placements` events of one machine, one per 100 placements, at `ts` onwards. */
async function placements(db: Db, deviceId: string, ts: number, placed: number, missed: number): Promise<void> {
  const events = Math.max(1, Math.ceil((placed + missed) / 100))
  for (let i = 0; i < events; i++) {
    const share = (n: number) => Math.floor(n / events) + (i < n % events ? 1 : 0)
    await insertEvent(db, deviceId, ts + i * 0.01, { kind: 'placements', placed: share(placed), missed: share(missed) })
  }
}

describe.each(DIALECTS)('the rollouts’ KPI gate (§16) on %s', (dialect) => {
  const apps: RolloutApp[] = []
  const machines: RawDevice[] = []
  const cleanups: (() => Promise<void> | void)[] = []
  afterEach(async () => {
    await Promise.all(machines.splice(0).map((m) => m.close()))
    for (const app of apps.splice(0)) await app.close()
    for (const cleanup of cleanups.splice(0)) await cleanup()
  })

  /**
   * A rollout of two linked machines in stages [50, 100] with `kpiGate`: the first stage holds
   * one machine, which `history` gave placements before the offer. Resolves once that machine
   * reported `installed`.
   */
  async function installedFirstStage(kpiGate: Record<string, unknown>, history: { placed: number; missed: number } | null, app?: RolloutApp) {
    const t = app ?? (await startRolloutApp(dialect))
    if (!app) apps.push(t)
    const releaseId = await t.upload(900 + apps.length)
    const ids = [uniqueDeviceId('kpi'), uniqueDeviceId('kpi')]
    const linked = new Map<string, RawDevice>()
    for (const id of ids) {
      const m = await linkMachine(t, id)
      machines.push(m)
      linked.set(id, m)
      if (history) await placements(t.storage.db, id, nowS() - 120, history.placed, history.missed)
    }
    const created = await t.api('POST', '', { release_id: releaseId, devices: ids, stages: [50, 100], kpi_gate: kpiGate })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const rolloutId: string = created.body.rollout.rollout_id
    const devices: { device_id: string; stage: number }[] = (await t.api('GET', `/${rolloutId}`)).body.devices
    const first = devices.find((d) => d.stage === 0)!.device_id
    const machine = linked.get(first)!
    const offer = await offerTo(machine)
    report(machine, offer, 'installed')
    await expect.poll(async () => (await t.api('GET', `/${rolloutId}`)).body.devices.find((d: { device_id: string }) => d.device_id === first).state, { timeout: 10_000 }).toBe('installed')
    const rollout = async () => (await t.api('GET', `/${rolloutId}`)).body.rollout
    return { t, rolloutId, first, rollout, afterInstall: (placed: number, missed: number) => placements(t.storage.db, first, nowS() + 1, placed, missed) }
  }

  it('refuses a bad kpi_gate with 400 and returns the one given with its defaults', async () => {
    const t = await startRolloutApp(dialect)
    apps.push(t)
    const releaseId = await t.upload(890)
    const id = uniqueDeviceId('kpi')
    machines.push(await linkMachine(t, id))
    for (const kpi_gate of [{ max_miss_rate_increase: 1.5 }, { max_miss_rate_increase: 0.1, min_placements: 0 }, { max_miss_rate_increase: 0.1, min_placements: 1.5 }, {}, { max_miss_rate_increase: 0.1, extra: 1 }, 'x']) {
      const refused = await t.api('POST', '', { release_id: releaseId, devices: [id], kpi_gate })
      expect(refused.status, JSON.stringify(kpi_gate)).toBe(400)
      expect(refused.body).toMatchObject({ success: false, error: 'bad_request' })
    }
    const created = await t.api('POST', '', { release_id: releaseId, devices: [id], kpi_gate: { max_miss_rate_increase: 0.02 } })
    expect(created.status).toBe(201)
    expect(created.body.rollout).toMatchObject({ kpi_gate: { max_miss_rate_increase: 0.02, min_placements: 1000, wait_seconds: 86400 }, gate: null, pause_reason: null })
  })

  it('reports the gate waiting for placements, then pauses the rollout on a regression, naming it in the audit record and the event', async () => {
    const { t, rolloutId, rollout, afterInstall } = await installedFirstStage({ max_miss_rate_increase: 0.01, min_placements: 1000 }, { placed: 999, missed: 1 })
    const events = await SseClient.open(`${t.url}/api/v1/events`, t.admin)
    cleanups.push(() => events.close())
    await expect.poll(async () => (await rollout()).gate, { timeout: 10_000 }).toBe('waiting')
    expect(await rollout()).toMatchObject({ state: 'running', stage: 0 })

    await afterInstall(900, 100)
    const paused = await events.next('rollout', (d) => d.rollout_id === rolloutId && d.state === 'paused')
    expect(paused.data).toMatchObject({ pause_reason: 'kpi_regression', gate: 'regression', stage: 0 })
    expect(await rollout()).toMatchObject({ state: 'paused', stage: 0, pause_reason: 'kpi_regression', gate: 'regression' })
    const audits = await t.storage.db.selectFrom('audit_log').select(['outcome', 'detail']).where('action', '=', 'rollout.pause').execute()
    expect(audits.map((a) => a.outcome)).toEqual(['kpi_regression'])
    expect(JSON.parse(audits[0]!.detail)).toMatchObject({ rollout_id: rolloutId, stage: 0, pause_reason: 'kpi_regression', machines: 1, miss_rate_before: 0.001, miss_rate_after: 0.1 })
  })

  it('opens the next stage when the miss rate did not rise more than allowed', async () => {
    const { rollout, afterInstall } = await installedFirstStage({ max_miss_rate_increase: 0.01, min_placements: 1000 }, { placed: 990, missed: 10 })
    await expect.poll(async () => (await rollout()).gate, { timeout: 10_000 }).toBe('waiting')
    await afterInstall(985, 15)
    await expect.poll(async () => (await rollout()).stage, { timeout: 10_000 }).toBe(1)
    expect(await rollout()).toMatchObject({ state: 'running', gate: null, pause_reason: null })
  })

  it('after wait_seconds counts only the machines with enough placements: none here, so the next stage opens', async () => {
    const { rollout, afterInstall } = await installedFirstStage({ max_miss_rate_increase: 0.01, min_placements: 5000, wait_seconds: 1 }, { placed: 999, missed: 1 })
    // Far too few placements after installing, and a terrible miss rate: not enough data to count.
    await afterInstall(100, 100)
    await expect.poll(async () => (await rollout()).stage, { timeout: 10_000 }).toBe(1)
    expect((await rollout()).state).toBe('running')
  })

  it('keeps waiting while a machine has too few placements and wait_seconds have not passed', async () => {
    const { rollout, afterInstall } = await installedFirstStage({ max_miss_rate_increase: 0.01, min_placements: 5000, wait_seconds: 3600 }, { placed: 999, missed: 1 })
    await afterInstall(999, 1)
    await expect.poll(async () => (await rollout()).gate, { timeout: 10_000 }).toBe('waiting')
    expect(await rollout()).toMatchObject({ state: 'running', stage: 0 })
  })

  it('does not count a machine without placements before its offer, nor wait for its placements after', async () => {
    const { rollout, afterInstall } = await installedFirstStage({ max_miss_rate_increase: 0.01, min_placements: 100 }, null)
    // Counted, it would hold the stage (50 < 100 placements, a day to wait) or fail the gate (all missed).
    await afterInstall(0, 50)
    await expect.poll(async () => (await rollout()).stage, { timeout: 10_000 }).toBe(1)
    expect((await rollout()).state).toBe('running')
  })

  it('names a pause by hand manual, and clears the reason on resume', async () => {
    const { t, rolloutId, rollout } = await installedFirstStage({ max_miss_rate_increase: 0.01 }, { placed: 999, missed: 1 })
    await expect.poll(async () => (await rollout()).gate, { timeout: 10_000 }).toBe('waiting')
    const paused = await t.api('POST', `/${rolloutId}/pause`)
    expect(paused.body.rollout).toMatchObject({ state: 'paused', pause_reason: 'manual' })
    const resumed = await t.api('POST', `/${rolloutId}/resume`)
    expect(resumed.body.rollout).toMatchObject({ state: 'running', pause_reason: null })
    // A resume accepts the open stage, as it does its failures: the gate no longer holds it.
    await expect.poll(async () => (await rollout()).stage, { timeout: 10_000 }).toBe(1)
  })

  it('decides a regression once with two instances on one database', async () => {
    let database: TestDatabase
    if (dialect === 'sqlite') {
      const dir = mkdtempSync(path.join(tmpdir(), 'kpi-gate-'))
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
      database = testDatabase('sqlite', path.join(dir, 'fleetgate.db'))
    } else {
      database = testDatabase('postgres')
    }
    cleanups.push(() => database.cleanup())
    const a = await startRolloutApp(dialect, {}, database)
    apps.push(a)
    const b = await startRolloutApp(dialect, {}, database)
    apps.push(b)
    const { rollout, afterInstall } = await installedFirstStage({ max_miss_rate_increase: 0.01, min_placements: 1000 }, { placed: 999, missed: 1 }, a)
    await expect.poll(async () => (await rollout()).gate, { timeout: 10_000 }).toBe('waiting')
    await afterInstall(800, 200)
    await expect.poll(async () => (await rollout()).state, { timeout: 10_000 }).toBe('paused')
    const audits = await b.storage.db.selectFrom('audit_log').select('outcome').where('action', '=', 'rollout.pause').execute()
    expect(audits.map((r) => r.outcome)).toEqual(['kpi_regression'])
  })
})
