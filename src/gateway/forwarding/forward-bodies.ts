import { Type } from '@sinclair/typebox'

/**
 * Request bodies the gateway checks before forwarding (contract §5 "Forwarding"). Fields
 * beyond those listed pass through to the device untouched.
 */

const Num = (description?: string) => Type.Number(description ? { description } : {})

export const MoveBody = Type.Object(
  {
    x: Type.Optional(Num('mm')),
    y: Type.Optional(Num('mm')),
    z: Type.Optional(Num('mm')),
    r: Type.Optional(Num('degrees')),
    speed: Type.Optional(Num()),
    relative: Type.Optional(Type.Boolean({ description: 'Move by the given amounts instead of to them' })),
  },
  { description: 'At least one of x, y, z, r', anyOf: ['x', 'y', 'z', 'r'].map((axis) => ({ required: [axis] })) },
)

export const SwitchBody = Type.Object({ state: Type.Boolean({ description: 'true on, false off' }) })

export const LightBody = Type.Object({
  state: Type.Boolean(),
  brightness: Type.Optional(Type.Integer({ minimum: 0, maximum: 255 })),
})

export const PickBody = Type.Object({ component_id: Type.String(), x: Num(), y: Num(), angle: Num() })

export const SettingsBody = Type.Object({ key: Type.String(), value: Type.Optional(Type.Unknown({ description: 'Any JSON value' })) })

export const DebugSendBody = Type.Object({
  command: Type.String({ description: 'Sent to the lower controller' }),
  params: Type.Optional(Type.String()),
})

export const OrderItem = Type.Object({ component: Type.String(), x: Num(), y: Num(), angle: Num() })

export const OrderCreateBody = Type.Object({
  name: Type.String(),
  items: Type.Array(OrderItem),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
})

const BASE64_PATTERN = '^[A-Za-z0-9+/]*={0,2}$'

export const ParseBody = Type.Object({
  filename: Type.String({ description: 'Name of the placement file, e.g. board-top.pos' }),
  encoding: Type.Literal('base64'),
  data: Type.String({ pattern: BASE64_PATTERN, description: 'File content, standard base64 with padding' }),
})

/** Optional bodies: absent is forwarded as null; present must be a JSON object. */
export const TaskStartBody = Type.Object({ order_id: Type.Optional(Type.String()) }, { nullable: true, description: 'May be omitted: forwarded as null' })

export const AnyObjectBody = Type.Object({}, { additionalProperties: true, nullable: true, description: 'Any JSON object; may be omitted (forwarded as null)' })

/** What JSON Schema cannot say about base64: whole 4-character groups. */
export function checkBase64Body(body: unknown): string | undefined {
  const data = (body as { data: string }).data
  return data.length % 4 === 0 ? undefined : 'data is not valid base64 (length must be a multiple of 4)'
}
