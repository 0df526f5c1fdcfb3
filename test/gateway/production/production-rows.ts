import { RUN_COLUMNS, recomputeRunningTotals } from '../../../src/gateway/production/ingest/running-totals.js'
import type { Db } from '../../../src/storage/storage.js'

/** Test rows written straight into the production tables, as the ingest side would leave them. */
export async function insertMachine(db: Db, deviceId: string, ratedCph: number | null, labels: Record<string, string> = {}): Promise<void> {
  await db
    .insertInto('devices')
    .values({ device_id: deviceId, hostname: deviceId, ip: '10.0.0.1', version: '1.0', key_hash: null, last_status: '{}', connect_time: null, last_heartbeat: null, link_instance: null, link_id: null, created_at: 1, rated_cph: ratedCph })
    .execute()
  const entries = Object.entries(labels)
  if (entries.length > 0) await db.insertInto('device_labels').values(entries.map(([key, value]) => ({ device_id: deviceId, key, value }))).execute()
}

export async function bind(db: Db, username: string, deviceId: string): Promise<void> {
  await db.insertInto('user_device_bindings').values({ username, user_id: username, device_id: deviceId, created_at: 1 }).execute()
}

type Rollup = {
  productive?: number
  standby?: number
  engineering?: number
  scheduled_down?: number
  unscheduled_down?: number
  non_scheduled?: number
  placed?: number
  missed?: number
  jobs_completed?: number
  faults?: Record<string, number>
  feeders?: { feeder: string; placed: number; missed: number }[]
  nozzles?: { nozzle: string; placed: number; missed: number }[]
}

const rollupValues = (deviceId: string, r: Rollup) => ({
  device_id: deviceId,
  s_productive: r.productive ?? 0,
  s_standby: r.standby ?? 0,
  s_engineering: r.engineering ?? 0,
  s_scheduled_down: r.scheduled_down ?? 0,
  s_unscheduled_down: r.unscheduled_down ?? 0,
  s_non_scheduled: r.non_scheduled ?? 0,
  placed: r.placed ?? 0,
  missed: r.missed ?? 0,
  jobs_completed: r.jobs_completed ?? 0,
  faults: JSON.stringify(r.faults ?? {}),
  feeders: JSON.stringify(r.feeders ?? []),
  nozzles: JSON.stringify(r.nozzles ?? []),
})

/** An hourly row; the machine's running totals are recomputed, as the ingest side keeps them. */
export async function insertHour(db: Db, deviceId: string, hourStart: number, r: Rollup): Promise<void> {
  await db.insertInto('production_hourly').values({ ...rollupValues(deviceId, r), ...NO_RUNNING_TOTALS, hour_start: hourStart }).execute()
  await recomputeRunningTotals(db, deviceId)
}

const NO_RUNNING_TOTALS = Object.fromEntries(RUN_COLUMNS.map((c) => [c, 0])) as Record<(typeof RUN_COLUMNS)[number], number>

export const insertDay = (db: Db, deviceId: string, dayStart: number, r: Rollup) =>
  db.insertInto('production_daily').values({ ...rollupValues(deviceId, r), day_start: dayStart }).execute()

export async function insertState(db: Db, deviceId: string, ts: number, state: string, eventId: string | null): Promise<void> {
  await db.insertInto('production_states').values({ device_id: deviceId, ts, state, reason: null, event_id: eventId }).execute()
}

export async function setCurrent(db: Db, deviceId: string, state: string, since: number): Promise<void> {
  await db.insertInto('production_current').values({ device_id: deviceId, state, reason: null, since }).execute()
}

let serial = 0
export async function insertEvent(db: Db, deviceId: string, ts: number, body: Record<string, unknown>): Promise<void> {
  const id = (body.id as string | undefined) ?? `ev-${++serial}`
  await db
    .insertInto('production_events')
    .values({
      device_id: deviceId,
      event_id: id,
      ts,
      kind: body.kind as string,
      state: (body.state as string | undefined) ?? null,
      reason: null,
      job_id: (body.job_id as string | undefined) ?? null,
      placed: (body.placed as number | undefined) ?? null,
      missed: (body.missed as number | undefined) ?? null,
      body: JSON.stringify({ id, ts, ...body }),
      received_at: ts,
    })
    .execute()
}
