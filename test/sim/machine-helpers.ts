import type { HttpMethod } from '@fleetgate/device-agent/protocol'
import { ManualClock } from '../../src/sim/machine/clock.js'
import { PickAndPlaceMachine, type MachineOptions } from '../../src/sim/machine/machine.js'

/** A machine on a manual clock, and a way to call it as the gateway would. */
export function testMachine(options: Partial<MachineOptions> = {}) {
  const clock = new ManualClock()
  const machine = new PickAndPlaceMachine({ deviceId: 'pnp-01', clock, ...options })
  // Answers are typed loosely on purpose: tests read whatever fields they check.
  const call = async (method: HttpMethod, path: string, body: unknown = null, query: Record<string, string> = {}) =>
    (await machine.routes.dispatch({ method, path, query, body, user: { id: 'admin', username: 'admin', role: 'admin' } })) as {
      status: number
      data: any
    }
  return { clock, machine, call }
}

export const ITEMS = [
  { component: '100nF', x: 10, y: 10, angle: 0 },
  { component: '10k', x: 20, y: 10, angle: 90 },
  { component: 'LED_Green', x: 30, y: 20, angle: 180 },
]

/** Every device-side endpoint of seed §4.3–4.11 with a body the gateway would accept. */
export const DEVICE_ENDPOINTS: [HttpMethod, string, unknown?][] = [
  ['GET', '/orders'],
  ['GET', '/orders/recent'],
  ['POST', '/orders', { name: 'n', items: ITEMS, settings: {} }],
  ['GET', '/orders/ord-0001'],
  ['POST', '/orders/parse', { filename: 'a.csv', encoding: 'base64', data: Buffer.from('Designator,Mid X,Mid Y\nR1,1,2\n').toString('base64') }],
  ['POST', '/orders/ord-0001/cancel'],
  ['DELETE', '/orders/ord-0001'],
  ['GET', '/hardware/position'],
  ['GET', '/hardware/sync'],
  ['POST', '/hardware/move', { x: 1 }],
  ['POST', '/hardware/pump', { state: true }],
  ['POST', '/hardware/valve', { state: true }],
  ['POST', '/hardware/light', { state: true }],
  ['POST', '/hardware/pick', { component_id: 'cmp-r10k', x: 1, y: 2, angle: 0 }],
  ['GET', '/tasks/current'],
  ['GET', '/tasks/board_image'],
  ['POST', '/orders', { name: 'm', items: ITEMS, settings: {} }],
  ['POST', '/tasks/start', {}],
  ['POST', '/tasks/pause'],
  ['POST', '/tasks/resume'],
  ['POST', '/tasks/stop'],
  ['GET', '/system/status'],
  ['GET', '/system/settings'],
  ['PUT', '/system/settings', { key: 'language', value: 'zh' }],
  ['POST', '/system/settings/reset'],
  ['POST', '/system/cal'],
  ['GET', '/debug/ports'],
  ['GET', '/debug/status'],
  ['GET', '/debug/serial-log'],
  ['POST', '/debug/send', { command: 'M114' }],
  ['GET', '/warehouse/components'],
  ['GET', '/warehouse/components/cmp-r10k'],
  ['POST', '/warehouse/components', { name: 'C 1uF 0402' }],
  ['PUT', '/warehouse/components/cmp-r10k', { stock: 10 }],
  ['DELETE', '/warehouse/components/cmp-ne555'],
  ['GET', '/warehouse/bom'],
  ['POST', '/warehouse/check-bom', {}],
  ['GET', '/warehouse/order-availability'],
  ['GET', '/warehouse/feeder-slots'],
  ['GET', '/vision/status'],
  ['GET', '/vision/model/status'],
  ['POST', '/vision/model/switch', { model: 'pnp-yolo-v3-tiny' }],
  ['GET', '/vision/target/status'],
  ['POST', '/vision/target/switch', { target: 'fiducial' }],
  ['POST', '/vision/detect/up', {}],
  ['POST', '/vision/detect/down', {}],
  ['GET', '/cameras/status'],
  ['GET', '/cameras/up/frame'],
  ['GET', '/cameras/down/frame'],
  ['GET', '/extensions'],
  ['GET', '/extensions/marketplace'],
  ['GET', '/extensions/stats'],
  ['POST', '/extensions/aoi-lite/install'],
  ['POST', '/extensions/aoi-lite/uninstall'],
  ['POST', '/auth/login', { username: 'operator', password: 'operator' }],
]
