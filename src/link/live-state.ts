import { Type, type Static } from '@sinclair/typebox'

/**
 * What only the instance holding a device's link knows exactly: counters, aliveness and the
 * latest heartbeat. Present means registered and connected. Crosses instances over the bus.
 */
export const LiveState = Type.Object({
  hostname: Type.String(),
  ip: Type.String(),
  version: Type.String(),
  connect_time: Type.Number(),
  last_heartbeat: Type.Union([Type.Number(), Type.Null()]),
  last_status: Type.Record(Type.String(), Type.Unknown()),
  messages_sent: Type.Integer(),
  messages_received: Type.Integer(),
  alive: Type.Boolean(),
})
export type LiveState = Static<typeof LiveState>

/** A device and the instance the database says holds its link (null: none). */
export interface LinkHint {
  device_id: string
  link_instance: string | null
}
