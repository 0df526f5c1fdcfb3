import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../events/event-envelope.js'
import { nowSeconds } from '../../lib/time.js'

/** `data` of `event: binding`: a user was bound to a device (device login) or unbound (admin). */
export const BindingEventData = Type.Object({
  username: Type.String(),
  device_id: Type.String(),
  bound: Type.Boolean(),
  at: Type.Number({ description: 'Event time (s since epoch)' }),
})
export const BindingEvent = eventSchema('binding', BindingEventData)
export type BindingEvent = Static<typeof BindingEvent>

export const bindingEvent = (username: string, device_id: string, bound: boolean): BindingEvent => ({
  kind: 'binding',
  data: { username, device_id, bound, at: nowSeconds() },
})
