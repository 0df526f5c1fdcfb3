import { Type, type Static } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { BeforeCursor, ListLimit, Millis, Nullable, StringEnum } from '../platform-schemas.js'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_SOURCES = ['device', 'operation'] as const
export type LogSource = (typeof LOG_SOURCES)[number]

export const MAX_MESSAGE_CHARS = 4096
export const MAX_TAG_CHARS = 64
export const MAX_LOG_BATCH = 1000
/** Contract §2: text/plain log batches up to 1 MiB. */
export const TEXT_LOG_LIMIT_BYTES = 1024 * 1024

export const LogLevelSchema = StringEnum(LOG_LEVELS)
export const LogSourceSchema = StringEnum(LOG_SOURCES)

export const LogEntry = Type.Object(
  {
    level: Type.Optional(StringEnum(LOG_LEVELS, 'Default info')),
    message: Type.String({ maxLength: MAX_MESSAGE_CHARS }),
    tag: Type.Optional(Type.String({ maxLength: MAX_TAG_CHARS })),
    ts: Type.Optional(Type.Integer({ description: 'ms since epoch, within [now − 30 days, now + 1 day]; default: time of receipt' })),
  },
  { additionalProperties: false },
)
export type LogEntry = Static<typeof LogEntry>

export const LogBatchJson = Type.Array(LogEntry, { maxItems: MAX_LOG_BATCH, description: 'At most 1000 entries; all or nothing' })
export const LogBatchText = Type.String({
  description: 'One entry per line: `[LEVEL] message` or ESP-IDF `E (1234) tag: message`; blank lines are skipped; ≤ 1 MiB',
})

export const LogRecord = Type.Object({
  id: Type.Integer(),
  source: LogSourceSchema,
  device_id: Nullable(Type.String()),
  level: LogLevelSchema,
  tag: Nullable(Type.String()),
  message: Type.String(),
  ts: Millis('Entry time'),
})

export const LogQuery = Type.Object({
  source: Type.Optional(LogSourceSchema),
  device_id: Type.Optional(Id('Only entries of this device')),
  level: Type.Optional(LogLevelSchema),
  limit: Type.Optional(ListLimit),
  before: Type.Optional(BeforeCursor),
})
/** The query with its default applied. */
export type LogQuery = Static<typeof LogQuery> & { limit: number }

export const LogList = Type.Object({ success: Type.Boolean(), logs: Type.Array(LogRecord), next_before: Type.Optional(Type.Integer()) })

export const LogClearBody = Type.Union(
  [Type.Object({ device_id: Type.Optional(Id()), source: Type.Optional(LogSourceSchema) }, { additionalProperties: false }), Type.Null()],
  { description: 'Filters; no body or {} clears every log' },
)
