import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'
import type { TelemetryValue } from '../platform-types'

export const RANGES = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000, '7d': 7 * 24 * 3_600_000 } as const
export type RangeName = keyof typeof RANGES
export const RANGE_NAMES = Object.keys(RANGES) as RangeName[]

/** The API's most points per key (contract §8). */
export const TELEMETRY_POINTS = 1000

/** Telemetry is not pushed (§11 has no telemetry event), so the chart polls. */
export const TELEMETRY_REFRESH_MS = 10_000

/** The newest TELEMETRY_POINTS points of one key over the chosen range (GET /api/admin/device/{id}/telemetry). */
export const telemetryQuery = (id: string, key: string, range: RangeName) =>
  queryOptions({
    queryKey: platformKeys.telemetry(id, key, range),
    queryFn: async ({ signal }) => {
      const answer = await ok(
        api.GET('/api/admin/device/{device_id}/telemetry', {
          params: { path: { device_id: id }, query: { keys: key, from: Date.now() - RANGES[range], limit: TELEMETRY_POINTS } },
          signal,
        }),
      )
      return (answer.series[key] ?? []) as [number, TelemetryValue][]
    },
    refetchInterval: TELEMETRY_REFRESH_MS,
  })
