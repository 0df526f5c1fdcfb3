import { gatewayNow, type FleetEvent, type ReleaseEventData } from './fleet-event.js'

export const releaseEvent = (release_id: string, display_version: string, active: boolean, reason: ReleaseEventData['reason']): FleetEvent => ({
  kind: 'release',
  data: { release_id, display_version, active, at: gatewayNow(), reason },
})
