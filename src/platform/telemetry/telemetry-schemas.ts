import { Type, type Static } from '@sinclair/typebox'
import { Millis } from '../platform-schemas.js'

export const TELEMETRY_KEY_PATTERN = '^[A-Za-z0-9_.-]{1,64}$'
export const MAX_BATCH_RECORDS = 1000

export const TelemetryValue = Type.Union([Type.Number(), Type.Boolean(), Type.String({ maxLength: 256 })])
export type TelemetryValue = Static<typeof TelemetryValue>

export const TelemetryRecord = Type.Object(
  {
    ts: Type.Optional(Type.Integer({ description: 'ms since epoch, within [now − 30 days, now + 1 day]; default: time of receipt' })),
    values: Type.Record(Type.String({ pattern: TELEMETRY_KEY_PATTERN }), TelemetryValue, {
      minProperties: 1,
      maxProperties: 64,
      additionalProperties: false,
      description: 'Up to 64 keys matching [A-Za-z0-9_.-]{1,64}; numbers, booleans or strings of ≤ 256 chars',
    }),
  },
  { additionalProperties: false },
)
export type TelemetryRecord = Static<typeof TelemetryRecord>

export const TelemetryBatch = Type.Object(
  { records: Type.Array(TelemetryRecord, { maxItems: MAX_BATCH_RECORDS }) },
  { additionalProperties: false, description: 'Also accepted: a bare JSON array of records. At most 1000 records; all or nothing.' },
)

export const AcceptedAnswer = Type.Object({ success: Type.Boolean(), accepted: Type.Integer() })

export const TelemetryQuery = Type.Object({
  keys: Type.Optional(Type.String({ description: 'Comma-separated keys; default: every key of the device' })),
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'ms since epoch, inclusive' })),
  to: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'ms since epoch, inclusive' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Points per key (the newest in range), 1–1000' })),
})

export const SeriesAnswer = Type.Object({
  success: Type.Boolean(),
  // A pair rather than a tuple schema: the serializer mishandles unions inside tuples.
  series: Type.Record(Type.String(), Type.Array(Type.Array(TelemetryValue, { minItems: 2, maxItems: 2, description: '[ts (ms since epoch), value]' })), {
    description: 'Per key, the newest `limit` points in range, oldest first',
  }),
})

export const LatestValues = Type.Record(Type.String(), Type.Object({ ts: Millis('Point time'), value: TelemetryValue }))
