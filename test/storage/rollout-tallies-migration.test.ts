import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rolloutTallies } from '../../src/storage/migrations/0013-rollout-tallies.js'
import type { MigrationContext } from '../../src/storage/migrations/migration-context.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

describe.each(DIALECTS)('migration 0013 (rollout tallies) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('counts the machines of the rollouts already stored, a row for every state of every stage with machines', async () => {
    const machine = (device_id: string, stage: number, state: string, position: number) => ({
      rollout_id: 'ro-old',
      device_id,
      position,
      stage,
      state,
      progress: null,
      error: null,
      offered_at: null,
      last_report_at: null,
      answered_at: null,
      next_try_at: 0,
      updated_at: 1,
    })
    const migration = rolloutTallies({ dialect } as MigrationContext)
    await migration.down!(storage.db)
    await storage.db
      .insertInto('rollouts')
      .values({
        rollout_id: 'ro-old',
        release_id: 'r-1',
        display_version: '1.0.0',
        state: 'completed',
        active_slot: null,
        stage: 1,
        stages: '[50, 100]',
        max_failure_ratio: 0.1,
        soak_seconds: 0,
        targeted: 5,
        check_failures_from: 0,
        stage_opened_at: 1,
        stage_ended_at: null,
        counts: '{}',
        counts_at: 0,
        created_at: 1,
        created_by: 'admin',
        updated_at: 1,
      })
      .execute()
    await storage.db
      .insertInto('rollout_devices')
      .values([machine('m1', 0, 'installed', 0), machine('m2', 0, 'failed', 1), machine('m3', 1, 'downloading', 2), machine('m4', 1, 'pending', 3), machine('m5', 1, 'pending', 4)])
      .execute()
    await migration.up(storage.db)
    const rows = await storage.db.selectFrom('rollout_tallies').select(['stage', 'state', 'n']).where('rollout_id', '=', 'ro-old').execute()
    expect(rows).toHaveLength(14)
    expect(rows.filter((r) => Number(r.n) > 0).map((r) => [Number(r.stage), r.state, Number(r.n)]).sort()).toEqual(
      [
        [0, 'failed', 1],
        [0, 'installed', 1],
        [1, 'downloading', 1],
        [1, 'pending', 2],
      ].sort(),
    )
  })
})
