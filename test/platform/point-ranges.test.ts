import { CompiledQuery, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { countInRanges, countInRangesQuery, pruneRanges, RANGE_ROWS, summarizeRanges } from '../../src/platform/telemetry/point-ranges.js'
import { TelemetryStore, type TimedRecord } from '../../src/platform/telemetry/telemetry-store.js'
import { pointRanges } from '../../src/storage/migrations/0023-point-ranges.js'
import type { MigrationContext } from '../../src/storage/migrations/migration-context.js'
import type { Storage } from '../../src/storage/storage.js'
import { openTestStorage } from '../helpers/dialects.js'

const DAY = 86_400_000
const NOW = 1_800_000_000_000

/** The stored ranges, by id. */
const ranges = async (storage: Storage) =>
  (await storage.db.selectFrom('platform_telemetry_ranges').selectAll().orderBy('range_id').execute()).map((r) => [Number(r.range_id), Number(r.min_ts), Number(r.max_ts)])

/** The ranges as the points stored say they are. */
async function exactRanges(storage: Storage) {
  const rows = await sql<{ range_id: number; min_ts: number; max_ts: number }>`
    select rowid / ${sql.lit(RANGE_ROWS)} as range_id, min(ts) as min_ts, max(ts) as max_ts from platform_telemetry group by 1 order by 1`.execute(storage.db)
  return rows.rows.map((r) => [Number(r.range_id), Number(r.min_ts), Number(r.max_ts)])
}

const countWhere = async (storage: Storage, where: ReturnType<typeof sql>) =>
  Number((await sql<{ n: number }>`select count(*) as n from platform_telemetry where ${where}`.execute(storage.db)).rows[0]!.n)

/** `n` records of two keys, at times `time(i)`: 2n points. */
const records = (n: number, time: (i: number) => number): TimedRecord[] => Array.from({ length: n }, (_, i) => ({ ts: time(i), values: { a: i, b: -i } }))

/** A permutation of 0…n-1 that scatters neighbours. */
const scatter = (i: number, n: number) => (i * 7_919) % n

/** Prunes in batches of `size` until one comes back short, as the retention job does: the points deleted. */
async function pruneAll(storage: Storage, cutoff: number, size: number): Promise<number> {
  let deleted = 0
  for (let from: number | undefined; ; ) {
    const step = await pruneRanges(storage.db, cutoff, size, from)
    deleted += step.deleted
    if (step.deleted < size) return deleted
    from = step.next
  }
}

describe('telemetry point ranges on sqlite', () => {
  let storage: Storage & { cleanup(): Promise<void> }
  let store: TelemetryStore
  beforeEach(async () => {
    storage = await openTestStorage('sqlite')
    store = new TelemetryStore(storage)
  })
  afterEach(() => storage.cleanup())

  it('has no index on time: ingest writes one B-tree besides the table', async () => {
    const indexes = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'platform_telemetry'`.execute(storage.db)
    expect(indexes.rows.map((r) => r.name)).toEqual(['platform_telemetry_series_ts'])
  })

  it('records bounds that are exactly the points of each range, across range boundaries and statements', async () => {
    // Range 0 holds row ids 1…4095: filled exactly, in time order, then the next points cross into range 1.
    const T = NOW - 2 * DAY
    await store.insert('pr-0', Array.from({ length: RANGE_ROWS - 1 }, (_, i) => ({ ts: T - (RANGE_ROWS - 2) + i, values: { a: i } })))
    await store.insert('pr-0', Array.from({ length: 10 }, (_, i) => ({ ts: T + 1 + i, values: { a: i } })))
    expect(await ranges(storage)).toEqual([
      [0, T - (RANGE_ROWS - 2), T],
      [1, T + 1, T + 10],
    ])
    // A span starting at a range's newest point counts it.
    expect(await countInRanges(storage.db, T, T + 1)).toBe(1)
    // 6,000 points in one batch (several INSERT statements) in scattered time order, then batches of several devices.
    await store.insert('pr-1', records(3_000, (i) => NOW - scatter(i, 3_000) * 1_000))
    await Promise.all(['pr-2', 'pr-3', 'pr-4'].map((device, d) => store.insert(device, records(1_500, (i) => NOW - DAY + scatter(i + d, 1_500) * 60_000))))
    const stored = await exactRanges(storage)
    expect(stored.length).toBeGreaterThanOrEqual(Math.floor(15_000 / RANGE_ROWS))
    expect(await ranges(storage)).toEqual(stored)
    // The data benchmark's rebuild says the same.
    await summarizeRanges(storage.db)
    expect(await ranges(storage)).toEqual(stored)
  })

  it('prunes every expired point, late ones written among new ones too, and keeps every other', async () => {
    const cutoff = NOW - 7 * DAY
    await store.insert('pr-old', records(2_500, (i) => cutoff - DAY + i))
    await store.insert('pr-new', records(2_500, (i) => cutoff + i))
    // A device back from a week offline: its expired points land in the newest ranges.
    await store.insert('pr-late', records(1_000, (i) => (i % 2 === 0 ? cutoff - 3 * DAY + i : NOW - i)))
    const expired = await countWhere(storage, sql`ts < ${cutoff}`)
    const kept = await countWhere(storage, sql`ts >= ${cutoff}`)
    expect(expired).toBe(2 * 2_500 + 1_000)

    expect(await pruneAll(storage, cutoff, 300)).toBe(expired)
    expect(await countWhere(storage, sql`ts < ${cutoff}`)).toBe(0)
    expect(await countWhere(storage, sql`ts >= ${cutoff}`)).toBe(kept)
    // Ranges left empty are gone; the others' bounds are those of the points left.
    expect(await ranges(storage)).toEqual(await exactRanges(storage))
    expect(await pruneAll(storage, cutoff, 300)).toBe(0)
  })

  it('prunes from where the last batch ended, each batch within its size', async () => {
    const cutoff = NOW - DAY
    // 5,000 expired points, then 5,000 kept.
    await store.insert('pr-b', records(5_000, (i) => cutoff - 2_500 + i))
    const steps: { from?: number; next?: number; deleted: number }[] = []
    for (let from: number | undefined; ; ) {
      const step = await pruneRanges(storage.db, cutoff, 700, from)
      steps.push({ from, ...step })
      if (step.deleted < 700) break
      from = step.next
    }
    expect(steps.reduce((n, s) => n + s.deleted, 0)).toBe(5_000)
    expect(steps.length).toBe(Math.ceil(5_000 / 700) + (5_000 % 700 === 0 ? 1 : 0))
    expect(steps.every((s) => s.deleted <= 700)).toBe(true)
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.next).toBeGreaterThanOrEqual(steps[i - 1]!.next!)
    expect(await countWhere(storage, sql`ts < ${cutoff}`)).toBe(0)
  })

  it('counts a span exactly, late points in ranges far from their time included, reading only the ranges that reach into it', async () => {
    const edge = NOW - DAY
    await store.insert('pc-1', records(4_000, (i) => edge - 120_000 + i * 60))
    await store.insert('pc-2', records(4_000, (i) => NOW - i))
    await store.insert('pc-late', records(300, (i) => edge - 30_000 + i * 200))
    for (const [from, to] of [
      [edge, edge + 60_000],
      [edge - 1, edge + 1],
      [edge + 59_999, edge + 120_000],
      [NOW - 10_000, NOW + 1],
      [0, NOW - 2 * DAY],
    ] as const) {
      expect(await countInRanges(storage.db, from, to)).toBe(await countWhere(storage, sql`ts >= ${from} and ts < ${to}`))
    }
    const query = countInRangesQuery(storage.db, edge, edge + 60_000).compile()
    const plan = await storage.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]))
    const steps = plan.rows.map((r) => r.detail).join('\n')
    expect(steps).toMatch(/SEARCH r USING INDEX platform_telemetry_ranges_max_ts \(max_ts>\?\)/)
    expect(steps).toMatch(/SEARCH p USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/)
  })

  it('migration 0023 summarizes the points stored before it and drops the time index; down brings the index back', async () => {
    await store.insert('pm-1', records(5_000, (i) => NOW - scatter(i, 5_000)))
    const migration = pointRanges({ dialect: 'sqlite' } as MigrationContext)
    await migration.down!(storage.db)
    const index = () => sql<{ name: string }>`select name from sqlite_master where name = 'platform_telemetry_ts'`.execute(storage.db)
    expect((await index()).rows).toHaveLength(1)
    await migration.up(storage.db)
    expect((await index()).rows).toHaveLength(0)
    expect(await ranges(storage)).toEqual(await exactRanges(storage))
    expect((await ranges(storage)).length).toBe(Math.ceil(10_001 / RANGE_ROWS))
  })
})
