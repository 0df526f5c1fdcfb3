import { Type, type Static } from '@sinclair/typebox'
import { Millis } from '../platform-schemas.js'

export const BindCodeAnswer = Type.Object({
  success: Type.Boolean(),
  code: Type.String({ description: '6 digits, single use; replaces any earlier code of the device' }),
  expires_at: Millis('Code expiry (5 minutes)'),
})

export const BindStatus = Type.Object({
  bound: Type.Boolean(),
  user_id: Type.Optional(Type.String()),
  bound_at: Type.Optional(Millis('Binding time')),
})

export type BindStatus = Static<typeof BindStatus>

export const BindStatusAnswer = Type.Composite([Type.Object({ success: Type.Boolean() }), BindStatus])

export const BindVerifyBody = Type.Object(
  {
    code: Type.String({ maxLength: 32, description: 'The code the device shows' }),
    user_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'With the console token (or an admin token): the user to bind to' }),
    ),
  },
  { additionalProperties: false },
)

export const Binding = Type.Object({
  device_id: Type.String(),
  user_id: Type.String(),
  bound_at: Millis('Binding time'),
})
export type Binding = Static<typeof Binding>

export const BindVerifyAnswer = Type.Composite([Type.Object({ success: Type.Boolean() }), Binding])
