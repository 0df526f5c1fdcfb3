import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProductionRepository } from '../../../../src/gateway/production/production-repository.js'
import { ProductionStore } from '../../../../src/gateway/production/ingest/production-store.js'
import { RUN_COLUMNS, SUMMED_COLUMNS } from '../../../../src/gateway/production/ingest/running-totals.js'
import type { Storage } from '../../../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../../../helpers/dialects.js'
import { addMachine, DAY, HOUR } from './production-helpers.js'

/** A seeded generator: the same events on every run, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32)
}

type Row = Record<string, unknown> & { hour_start: number }

describe.each(DIALECTS)('running totals of the hourly figures (§16 fleet query) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  let store: ProductionStore
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    store = new ProductionStore(storage)
  })
  afterAll(() => storage.cleanup())

  const hourlyRows = async (deviceId: string) =>
    ((await storage.db.selectFrom('production_hourly').selectAll().where('device_id', '=', deviceId).orderBy('hour_start').execute()) as unknown as Row[]).map(
      (r): Row => ({ ...r, hour_start: Number(r.hour_start) }),
    )

  it('equal the sums of every earlier hour after in-order, late and repeated events', async () => {
    const now = Math.floor(Date.now() / 1000)
    const next = random(36)
    const states = ['productive', 'standby', 'engineering', 'unscheduled_down', 'scheduled_down', 'non_scheduled']
    for (const deviceId of ['rt-a', 'rt-b']) {
      await addMachine(storage, deviceId)
      const sent: Record<string, unknown>[] = []
      for (let frame = 0; frame < 40; frame++) {
        const events: Record<string, unknown>[] = []
        for (let i = 0; i < 1 + Math.floor(next() * 6); i++) {
          // Mostly the last hours; one event in four up to 20 days late.
          const age = next() < 0.25 ? next() * 20 * DAY : next() * 6 * HOUR
          const ts = Math.round(now - age)
          const id = `${deviceId}-${frame}-${i}`
          if (next() < 0.4) events.push({ id, ts, kind: 'state', state: states[Math.floor(next() * states.length)] })
          else events.push({ id, ts, kind: 'placements', placed: 1 + Math.floor(next() * 50), missed: Math.floor(next() * 3) })
        }
        if (sent.length > 0 && next() < 0.2) events.push(sent[Math.floor(next() * sent.length)]!) // a repeat counts once
        sent.push(...events)
        await store.storeFrame(deviceId, events as never)
      }
      const rows = await hourlyRows(deviceId)
      expect(rows.length).toBeGreaterThan(10)
      const running = Object.fromEntries(SUMMED_COLUMNS.map((c) => [c, 0])) as Record<string, number>
      for (const row of rows) {
        for (const [i, column] of SUMMED_COLUMNS.entries()) {
          running[column]! += Number(row[column])
          expect(Number(row[RUN_COLUMNS[i]!]), `${deviceId} ${row.hour_start} ${RUN_COLUMNS[i]}`).toBeCloseTo(running[column]!, 3)
        }
      }
      expect(running.placed).toBe(sent.filter((e, i) => e.kind === 'placements' && sent.findIndex((f) => f.id === e.id) === i).reduce((n, e) => n + (e.placed as number), 0))
    }
  })

  /** A window of whole hours only, with nothing open in it: the running totals alone answer it. */
  const wholeHours = (start: number, end: number) => ({ whole: { start, end }, raw: [], covered: { start, end }, now: start })

  it('answer any range of whole hours as the difference of two rows per machine, read for every machine in one statement', async () => {
    const repo = new ProductionRepository(storage)
    const rows = await hourlyRows('rt-a')
    const scope = { where: (eb: { and: (x: never[]) => never }) => eb.and([]) } as never
    for (const [a, b] of [
      [rows[0]!.hour_start, rows.at(-1)!.hour_start + HOUR],
      [rows[3]!.hour_start, rows.at(-4)!.hour_start],
      [rows[5]!.hour_start, rows[5]!.hour_start + HOUR],
      [rows[0]!.hour_start - 10 * DAY, rows[0]!.hour_start],
    ] as [number, number][]) {
      const [machine] = (await repo.fleetGroups(scope, undefined, wholeHours(a, b))).filter((r) => r.key === 'rt-a')
      const inRange = rows.filter((r) => r.hour_start >= a && r.hour_start < b)
      expect(machine!.placed, `[${a}, ${b})`).toBe(inRange.reduce((n, r) => n + Number(r.placed), 0))
      expect(machine!.seconds.productive).toBeCloseTo(
        inRange.reduce((n, r) => n + Number(r.s_productive), 0),
        3,
      )
    }
    // By machine id as well as by condition; a machine without figures has zeros.
    const all = wholeHours(rows[0]!.hour_start, rows.at(-1)!.hour_start + HOUR)
    expect((await repo.fleetGroups({ deviceId: 'rt-b' }, undefined, all)).map((r) => r.key)).toEqual(['rt-b'])
    await addMachine(storage, 'rt-none')
    expect(await repo.fleetGroups({ deviceId: 'rt-none' }, 'line', all)).toMatchObject([{ key: null, devices: 1, placed: 0, missed: 0 }])
  })
})
