import { Type, type TSchema } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'

/** Schemas shared by the device and admin sides of the platform. */

/** A string out of a fixed list (one `enum`, so a wrong value gets a readable 400). */
export const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>(Type.String({ enum: [...values], ...(description ? { description } : {}) }))

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/** Every platform time value: integer milliseconds since epoch (contract §2). */
export const Millis = (description: string) => Type.Integer({ description: `${description} (ms since epoch)` })

export const DeviceIdParams = Type.Object({ device_id: Id('Device id') })

/** Every admin list: `limit` 1–1000, default 100 (contract §2, §5). */
export const ListLimit = Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size, 1–1000' })

/** Newest-first paging: only entries with an id below this one. */
export const BeforeCursor = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Cursor: `next_before` of the previous page' })

/** A free-form JSON object (configuration, command params, results). */
export const JsonObject = Type.Object({}, { additionalProperties: true })

export const Success = Type.Object({ success: Type.Boolean() })

export const DEVICE_TAGS = ['platform device']
export const ADMIN_TAGS = ['platform admin']
type Security = { [scheme: string]: string[] }[]
/** OpenAPI security of device calls: the token is required only with PLATFORM_REQUIRE_DEVICE_TOKEN=true. */
export const DEVICE_SECURITY: Security = [{ deviceToken: [] }, {}]
export const ADMIN_SECURITY: Security = [{ consoleToken: [] }, { bearer: [] }]
