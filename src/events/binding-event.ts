import { gatewayNow, type FleetEvent } from './fleet-event.js'

export const bindingEvent = (username: string, device_id: string, bound: boolean): FleetEvent => ({
  kind: 'binding',
  data: { username, device_id, bound, at: gatewayNow() },
})
