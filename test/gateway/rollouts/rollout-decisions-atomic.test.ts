import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Dialect } from '../../../src/storage/storage.js'
import type { Db } from '../../../src/storage/storage.js'
import { DIALECTS } from '../../helpers/dialects.js'
import { uniqueDeviceId, type RawDevice } from '../helpers/raw-device.js'
import { linkMachine, metricSample, offerTo, report, startRolloutApp, type RolloutApp } from './rollout-kit.js'

/**
 * Issue #32, item 1: a rollout's decision and its consequences (state change, release activation,
 * audit records) commit together or not at all. A database trigger makes the audit record of the
 * decision fail, as a crash or an outage between two statements would: the decision must not be
 * kept without it, and once the database takes it again a later pass decides, once.
 */
async function failAuditOf(db: Db, dialect: Dialect, action: string): Promise<() => Promise<void>> {
  if (dialect === 'sqlite') {
    await sql
      .raw(`CREATE TRIGGER fail_audit BEFORE INSERT ON audit_log WHEN NEW.action = '${action}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`)
      .execute(db)
    return async () => void (await sql`DROP TRIGGER fail_audit`.execute(db))
  }
  await sql
    .raw(
      `CREATE FUNCTION fail_audit() RETURNS trigger AS $$ BEGIN IF NEW.action = '${action}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    )
    .execute(db)
  await sql`CREATE TRIGGER fail_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION fail_audit()`.execute(db)
  return async () => {
    await sql`DROP TRIGGER fail_audit ON audit_log`.execute(db)
    await sql`DROP FUNCTION fail_audit()`.execute(db)
  }
}

describe.each(DIALECTS)('rollout decisions commit with their consequences on %s', (dialect) => {
  let t: RolloutApp
  const machines: RawDevice[] = []

  beforeEach(async () => {
    t = await startRolloutApp(dialect)
  })
  afterEach(async () => {
    await Promise.all(machines.splice(0).map((m) => m.close()))
    await t.close()
  })

  const passFailures = () => metricSample(t, 'fleetgate_rollout_pass_failures_total')
  const rollout = async (id: string) => (await t.api('GET', `/${id}`)).body.rollout
  const releaseState = async (releaseId: string) =>
    (await t.storage.db.selectFrom('firmware_releases').select('state').where('release_id', '=', releaseId).executeTakeFirstOrThrow()).state
  const audits = async (action: string) => (await t.storage.db.selectFrom('audit_log').select('id').where('action', '=', action).execute()).length
  /** One linked machine offered a new rollout of release `build`, with the audit record of `failing` made to fail. */
  const offeredWithFailingAudit = async (build: number, failing: string) => {
    const releaseId = await t.upload(build)
    const id = uniqueDeviceId('atomic')
    const machine = await linkMachine(t, id)
    machines.push(machine)
    const rolloutId: string = (await t.api('POST', '', { release_id: releaseId, devices: [id], stages: [100] })).body.rollout.rollout_id
    const offer = await offerTo(machine)
    const restore = await failAuditOf(t.storage.db, dialect, failing)
    return { releaseId, machine, rolloutId, offer, restore, failuresBefore: await passFailures() }
  }

  it('keeps a rollout running, its release not active, when the completion cannot commit whole; completes it once it can', async () => {
    const { releaseId, machine, rolloutId, offer, restore, failuresBefore } = await offeredWithFailingAudit(701, 'rollout.complete')
    report(machine, offer, 'installed')
    // Two failed passes after the machine installed: each tried the completion and kept nothing.
    await expect.poll(passFailures, { timeout: 10_000 }).toBeGreaterThanOrEqual(failuresBefore + 2)
    expect((await rollout(rolloutId)).state).toBe('running')
    expect(await releaseState(releaseId)).toBe('published')
    expect(await audits('firmware.activate')).toBe(0)

    await restore()
    await expect.poll(async () => (await rollout(rolloutId)).state, { timeout: 10_000 }).toBe('completed')
    expect(await releaseState(releaseId)).toBe('active')
    expect(await audits('rollout.complete')).toBe(1)
    expect(await audits('firmware.activate')).toBe(1)
  })

  it('keeps a rollout running when its pause cannot commit with its audit record; pauses it once it can', async () => {
    const { machine, rolloutId, offer, restore, failuresBefore } = await offeredWithFailingAudit(702, 'rollout.pause')
    report(machine, offer, 'failed', { error: 'flash write failed' })
    await expect.poll(passFailures, { timeout: 10_000 }).toBeGreaterThanOrEqual(failuresBefore + 2)
    expect((await rollout(rolloutId)).state).toBe('running')

    await restore()
    await expect.poll(async () => (await rollout(rolloutId)).state, { timeout: 10_000 }).toBe('paused')
    expect(await audits('rollout.pause')).toBe(1)
  })
})
