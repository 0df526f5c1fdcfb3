/**
 * Issue #32, item 7: what a rollout pass pays to know its counts, at fleet size. Every instance
 * reads them every pass (500 ms). A rollout of `machines` machines is created in a database of
 * its own (SQLite in a temporary file, PostgreSQL in a scratch database), its machines spread over
 * the states an install goes through; then the pass's read is timed: the tallies the transitions
 * keep, beside the GROUP BY over every machine row they replaced (the baseline, same run).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createScratchDatabase } from '../src/cluster/scratch-database.js'
import { RolloutRepository } from '../src/gateway/rollouts/rollout-repository.js'
import { MACHINE_STATES } from '../src/gateway/rollouts/rollout-states.js'
import { openStorage, type Storage } from '../src/storage/storage.js'

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const READS = 200

async function timeReads(read: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = []
  for (let i = 0; i < READS; i++) {
    const started = performance.now()
    await read()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(READS * 0.5)]!, p99: times[Math.floor(READS * 0.99)]! }
}

async function measure(storage: Storage, machines: number): Promise<string> {
  await storage.migrate()
  const repo = new RolloutRepository(storage.db, storage.clock)
  const rolloutId = 'ro-bench-counts'
  const stages = [1, 10, 100]
  const created = performance.now()
  await repo.create({
    rollout_id: rolloutId,
    release_id: 'bench',
    display_version: '1.0.0',
    stages,
    max_failure_ratio: 0.1,
    soak_seconds: 0,
    created_by: 'bench',
    machines: Array.from({ length: machines }, (_, i) => ({ device_id: `m-${String(i).padStart(6, '0')}`, stage: i < machines * 0.01 ? 0 : i < machines * 0.1 ? 1 : 2 })),
    now: 0,
  })
  const createSeconds = (performance.now() - created) / 1000
  // Spread the machines over the states, as in the middle of the last stage (the tallies follow).
  await storage.db.updateTable('rollout_devices').set((eb) => ({ state: eb.case().when('position', '<', machines * 0.3).then('installed').when('position', '<', machines * 0.5).then('downloading').else('pending').end() })).execute()
  await storage.db.deleteFrom('rollout_tallies').execute()
  const counted = await storage.db.selectFrom('rollout_devices').select(['stage', 'state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy(['stage', 'state']).execute()
  const present = new Set(counted.map((c) => Number(c.stage)))
  await storage.db
    .insertInto('rollout_tallies')
    .values([...present].flatMap((stage) => MACHINE_STATES.map((state) => ({ rollout_id: rolloutId, stage, state, n: Number(counted.find((c) => Number(c.stage) === stage && c.state === state)?.n ?? 0) }))))
    .execute()
  const groupBy = () => storage.db.selectFrom('rollout_devices').select(['stage', 'state', (eb) => eb.fn.countAll<number>().as('n')]).where('rollout_id', '=', rolloutId).groupBy(['stage', 'state']).execute()
  await timeReads(groupBy)
  const baseline = await timeReads(groupBy)
  const tallies = await timeReads(() => repo.tally(rolloutId))
  const ratio = baseline.p50 / tallies.p50
  return (
    `${storage.dialect}: created with ${machines.toLocaleString('en')} machines in ${createSeconds.toFixed(1)} s; ` +
    `a pass's counts from the tallies p50 ${tallies.p50.toFixed(2)} ms, p99 ${tallies.p99.toFixed(2)} ms; ` +
    `GROUP BY over the machines (baseline) p50 ${baseline.p50.toFixed(2)} ms, p99 ${baseline.p99.toFixed(2)} ms → ${ratio.toFixed(0)}× less per pass`
  )
}

export async function rolloutCountsAtScale(machines: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-bench-counts-'))
  try {
    const sqlite = await openStorage({ kind: 'sqlite', path: path.join(dir, 'counts.db') })
    try {
      console.log(await measure(sqlite, machines))
    } finally {
      await sqlite.close()
    }
    const scratch = await createScratchDatabase(PG_URL, 'bench_counts')
    try {
      const pg = await openStorage({ kind: 'postgres', url: scratch.url })
      try {
        console.log(await measure(pg, machines))
      } finally {
        await pg.close()
      }
    } finally {
      await scratch.drop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
