import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../events/event-envelope.js'
import { nowSeconds } from '../../lib/time.js'

/** Why a `release` event was raised (an addition to contract §11's fields). */
export const RELEASE_EVENT_REASONS = ['uploaded', 'activated', 'deactivated'] as const
export type ReleaseEventReason = (typeof RELEASE_EVENT_REASONS)[number]

/** `data` of `event: release`: a release was uploaded, activated, or replaced by another. */
export const ReleaseEventData = Type.Object({
  release_id: Type.String(),
  display_version: Type.String(),
  active: Type.Boolean(),
  at: Type.Number({ description: 'Event time (s since epoch)' }),
  reason: Type.Union(RELEASE_EVENT_REASONS.map((r) => Type.Literal(r))),
})
export const ReleaseEvent = eventSchema('release', ReleaseEventData)
export type ReleaseEvent = Static<typeof ReleaseEvent>

export const releaseEvent = (release_id: string, display_version: string, active: boolean, reason: ReleaseEventReason): ReleaseEvent => ({
  kind: 'release',
  data: { release_id, display_version, active, at: nowSeconds(), reason },
})
