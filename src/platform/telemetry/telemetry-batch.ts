import type { TelemetryRecord } from './telemetry-schemas.js'

/** A record whose time is settled (its own `ts`, or the time of receipt). */
export type TimedRecord = TelemetryRecord & { ts: number }

export interface NewestPoint {
  ts: number
  /** JSON text. */
  value: string
}

/** One device's batch, its values already JSON text, as the store writes it. */
export interface EncodedBatch {
  deviceId: string
  /** Per key, its newest point in the batch. */
  newest: Map<string, NewestPoint>
  /** [key, ts, JSON value] per point. */
  points: [string, number, string][]
}

export function encodeBatch(deviceId: string, records: TimedRecord[]): EncodedBatch {
  const newest = new Map<string, NewestPoint>()
  const points: [string, number, string][] = []
  for (const { ts, values } of records) {
    for (const key in values) {
      const value = JSON.stringify(values[key])
      points.push([key, ts, value])
      const seen = newest.get(key)
      if (seen === undefined || ts >= seen.ts) newest.set(key, { ts, value })
    }
  }
  return { deviceId, newest, points }
}

/** A series' key in maps: (device, key). */
export const seriesKey = (deviceId: string, key: string) => `${deviceId}\u0000${key}`
