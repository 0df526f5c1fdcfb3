import type { FirmwareStatus } from '@fleetgate/device-agent'
import type { FakeLink } from './fake-gateway.js'

export type StatusFrame = FirmwareStatus & { type: 'firmware-status' }

/** The link's firmware-status frames, up to and including the first in one of `states`. */
export async function statusesUntil(link: FakeLink, ...states: FirmwareStatus['state'][]): Promise<StatusFrame[]> {
  const seen: StatusFrame[] = []
  for (;;) {
    const frame = await link.nextFrame<StatusFrame>('firmware-status')
    seen.push(frame)
    if (states.includes(frame.state)) return seen
  }
}
