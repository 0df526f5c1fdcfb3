import { requestFrameFields } from '@fleetgate/device-agent/protocol'
import type { DeviceCall } from './device-bus.js'

/**
 * A forwarded call as one instance sends it to the instance holding the device's link:
 * `{"timeout_ms":<ms>,` then the request frame's own fields (`requestFrameFields`). The holder
 * reads the time-out, puts the frame's head (its id) before the rest and sends that to the
 * device as it came: nothing is parsed or written again on the way. The message is JSON too,
 * so an instance that predates it can still read it (it answers null: see NatsDeviceBus.request).
 */
const START = '{"timeout_ms":'
/** The longest time-out a timer can hold (setTimeout fires at once beyond it). */
const MAX_TIMEOUT_MS = 2_147_483_647

export function callMessageText(call: DeviceCall, timeoutMs: number): string {
  return `${START}${timeoutMs},${requestFrameFields(call)}`
}

/** The time-out and the frame's fields of a call message; undefined when it is not one. */
export function parseCallMessage(text: string): { timeoutMs: number; fields: string } | undefined {
  if (!text.startsWith(START) || !text.endsWith('}')) return undefined
  const comma = text.indexOf(',', START.length)
  if (comma < 0) return undefined
  const timeoutMs = Number(text.slice(START.length, comma))
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) return undefined
  return { timeoutMs, fields: text.slice(comma + 1) }
}
