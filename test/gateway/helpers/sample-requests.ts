import type { ForwardedEndpoint } from '../../../src/gateway/forwarding/forwarded-endpoints.js'

/** Sample path ids and valid bodies for every forwarded endpoint. */
export const PARAMS: Record<string, string> = { oid: 'order-7', cid: 'R_0603.10k', eid: 'ext:vision-plus', cam: 'down' }

export const BODIES: Record<string, unknown> = {
  'POST /orders': { name: 'Board A', items: [{ component: 'R1', x: 1.5, y: 2, angle: 90 }], settings: { speed: 'fast' } },
  'POST /orders/parse': { filename: 'board.pos', encoding: 'base64', data: Buffer.from('# Ref Val Package PosX PosY Rot Side\n').toString('base64') },
  'POST /hardware/move': { x: 10.5, speed: 50, relative: true },
  'POST /hardware/pump': { state: true },
  'POST /hardware/valve': { state: false },
  'POST /hardware/light': { state: true, brightness: 255 },
  'POST /hardware/pick': { component_id: 'C1', x: 1, y: 2, angle: 0 },
  'POST /tasks/start': { order_id: 'order-7' },
  'PUT /system/settings': { key: 'speed', value: { max: 3 } },
  'POST /debug/send': { command: 'G28', params: 'X Y' },
  'POST /warehouse/components': { id: 'R1', value: '10k' },
  'PUT /warehouse/components/:cid': { value: '22k' },
  'POST /warehouse/check-bom': { bom: [{ component: 'R1', count: 4 }] },
  'POST /vision/model/switch': { model: 'yolo-s' },
  'POST /vision/target/switch': { target: 'chip' },
  'POST /vision/detect/:cam': { threshold: 0.5 },
}

export const key = (e: ForwardedEndpoint) => `${e.method} ${e.path}`
export const concrete = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => PARAMS[name]!)
