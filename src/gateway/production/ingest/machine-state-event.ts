import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../../events/event-envelope.js'

/** `data` of `event: machine-state` (§16): a machine's current state changed (receivers as `device`). */
export const MachineStateEventData = Type.Object({
  device_id: Type.String(),
  state: Type.String({ description: 'One of the six SEMI E10 states, or `offline` (its link closed)' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'The state event’s reason; null when none' }),
  at: Type.Number({ description: 'When the machine entered the state: its state event’s ts, or when its link closed (s since epoch)' }),
})
export const MachineStateEvent = eventSchema('machine-state', MachineStateEventData)
export type MachineStateEvent = Static<typeof MachineStateEvent>
