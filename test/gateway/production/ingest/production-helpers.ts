import type { Storage } from '../../../../src/storage/storage.js'

export const HOUR = 3600
export const DAY = 86_400

/** A machine record, as a first registration leaves it (production rows reference it). */
export async function addMachine(storage: Storage, deviceId: string): Promise<void> {
  await storage.db
    .insertInto('devices')
    .values({ device_id: deviceId, hostname: deviceId, ip: '', version: '1', key_hash: null, last_status: '{}', created_at: Date.now() / 1000 })
    .execute()
}

export type Seconds = Record<string, number>
const STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled']

/** The stored seconds per state of each hour (or day) of a machine, zeros left out. */
export async function storedSeconds(storage: Storage, deviceId: string, table: 'production_hourly' | 'production_daily' = 'production_hourly'): Promise<Map<number, Seconds>> {
  const rows = await storage.db.selectFrom(table).selectAll().where('device_id', '=', deviceId).execute()
  const out = new Map<number, Seconds>()
  for (const row of rows as unknown as Record<string, number>[]) {
    const start = Number(row.hour_start ?? row.day_start)
    const seconds: Seconds = {}
    for (const state of STATES) {
      const value = Number(row[`s_${state}`])
      if (Math.abs(value) > 1e-6) seconds[state] = value
    }
    if (Object.keys(seconds).length > 0) out.set(start, seconds)
  }
  return out
}

/** Asserts two maps of per-bucket seconds are equal to the millisecond. */
export function sameSeconds(actual: Map<number, Seconds>, expected: Map<number, Seconds>): string | undefined {
  const starts = new Set([...actual.keys(), ...expected.keys()])
  for (const start of starts) {
    const a = actual.get(start) ?? {}
    const e = expected.get(start) ?? {}
    for (const state of new Set([...Object.keys(a), ...Object.keys(e)])) {
      if (Math.abs((a[state] ?? 0) - (e[state] ?? 0)) > 1e-3) return `bucket ${start} ${state}: stored ${a[state] ?? 0}, expected ${e[state] ?? 0}`
    }
  }
  return undefined
}

/** Closed state intervals of a sequence cut into buckets: the reference the rollups are held to. */
export function referenceSeconds(sequence: { ts: number; state: string }[], size: number): Map<number, Seconds> {
  const sorted = [...sequence].sort((a, b) => a.ts - b.ts)
  const out = new Map<number, Seconds>()
  for (let i = 1; i < sorted.length; i++) {
    const { ts: from, state } = sorted[i - 1]!
    const to = sorted[i]!.ts
    if (state === 'offline') continue
    for (let t = from; t < to; ) {
      const start = Math.floor(t / size) * size
      const end = Math.min(to, start + size)
      const bucket = out.get(start) ?? {}
      bucket[state] = (bucket[state] ?? 0) + (end - t)
      out.set(start, bucket)
      t = end
    }
  }
  return out
}
