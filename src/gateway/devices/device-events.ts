import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../events/event-envelope.js'

/** Why a `device` event was raised (an addition to contract §11's fields). */
export const DEVICE_EVENT_REASONS = ['registered', 'taken_over', 'closed', 'not_alive', 'alive', 'instance_lost'] as const

/** Gateway times are seconds since epoch, fractional (contract §2). */
const Seconds = (description: string) => Type.Number({ description: `${description} (s since epoch)` })

/** `data` of `event: device`: a link registered, was taken over, closed, or the device's alive state changed. */
export const DeviceEventData = Type.Object({
  device_id: Type.String(),
  alive: Type.Boolean(),
  registered: Type.Boolean(),
  version: Type.String(),
  ip: Type.String(),
  last_heartbeat: Type.Union([Seconds('Last heartbeat'), Type.Null()]),
  at: Seconds('Event time'),
  reason: Type.Union(DEVICE_EVENT_REASONS.map((r) => Type.Literal(r))),
})
export const DeviceEvent = eventSchema('device', DeviceEventData)
export type DeviceEvent = Static<typeof DeviceEvent>

/** `data` of `event: device-status`: the status object of the device's latest heartbeat. */
export const DeviceStatusEventData = Type.Object({
  device_id: Type.String(),
  status: Type.Record(Type.String(), Type.Unknown(), { description: "The heartbeat's status object" }),
  at: Seconds('Event time'),
})
export const DeviceStatusEvent = eventSchema('device-status', DeviceStatusEventData)
export type DeviceStatusEvent = Static<typeof DeviceStatusEvent>
