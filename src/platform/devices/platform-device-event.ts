import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../events/event-envelope.js'
import { Millis, Nullable, StringEnum } from '../platform-schemas.js'

/** Why a `platform-device` event was raised (an addition to contract §11's fields). */
export const PLATFORM_DEVICE_EVENT_REASONS = ['online', 'offline', 'added', 'deleted'] as const
export type PlatformDeviceEventReason = (typeof PLATFORM_DEVICE_EVENT_REASONS)[number]

/** `data` of `event: platform-device`: a device was added or deleted, came online or went offline. */
export const PlatformDeviceEventData = Type.Object({
  device_id: Type.String(),
  online: Type.Boolean(),
  last_online_at: Nullable(Millis('Last heartbeat')),
  at: Millis('Event time'),
  reason: StringEnum(PLATFORM_DEVICE_EVENT_REASONS),
})
export const PlatformDeviceEvent = eventSchema('platform-device', PlatformDeviceEventData)
export type PlatformDeviceEvent = Static<typeof PlatformDeviceEvent>

export const platformDeviceEvent = (
  device_id: string,
  online: boolean,
  last_online_at: number | null,
  reason: PlatformDeviceEventReason,
  at = Date.now(),
): PlatformDeviceEvent => ({ kind: 'platform-device', data: { device_id, online, last_online_at, at, reason } })
