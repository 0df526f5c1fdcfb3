import type { TSchema } from '@sinclair/typebox'
import type { HttpMethod } from '@fleetgate/device-agent/protocol'
import {
  AnyObjectBody,
  checkBase64Body,
  DebugSendBody,
  LightBody,
  MoveBody,
  OrderCreateBody,
  ParseBody,
  PickBody,
  SettingsBody,
  SwitchBody,
  TaskStartBody,
} from './forward-bodies.js'

/** How the device's answer reaches the client. */
export type AnswerShape =
  /** `{success: status < 400, status, data}` with the device's status as HTTP status. */
  | { kind: 'envelope' }
  /** `{success, <field>: data.<field>}`; the device's error status passes through as `device_error`. */
  | { kind: 'plain'; field: 'orders' | 'order' | 'parsed' | 'extensions' | 'marketplace'; status?: 201 }

export interface ForwardedEndpoint {
  method: HttpMethod
  /** Device-side path pattern: the gateway path after /api/v1/devices/{device_id}. */
  path: string
  tag: string
  summary: string
  body?: TSchema
  /** Checks JSON Schema cannot express; returns the problem, if any (→ 400). */
  check?: (body: unknown) => string | undefined
  bodyLimit?: number
  answer: AnswerShape
}

const envelope: AnswerShape = { kind: 'envelope' }

/** Fixed by the contract (§2): placement files may be large. */
const PARSE_BODY_LIMIT = 16_777_216

/** Every endpoint forwarded to a device (seed §4.3–4.11), and nothing else. */
export const FORWARDED_ENDPOINTS: readonly ForwardedEndpoint[] = [
  // §4.3 orders
  { method: 'GET', path: '/orders', tag: 'orders', summary: 'List orders', answer: { kind: 'plain', field: 'orders' } },
  { method: 'GET', path: '/orders/recent', tag: 'orders', summary: 'Recently processed orders', answer: { kind: 'plain', field: 'orders' } },
  { method: 'GET', path: '/orders/:oid', tag: 'orders', summary: 'One order', answer: { kind: 'plain', field: 'order' } },
  { method: 'POST', path: '/orders', tag: 'orders', summary: 'Create an order', body: OrderCreateBody, answer: { kind: 'plain', field: 'order', status: 201 } },
  {
    method: 'POST',
    path: '/orders/parse',
    tag: 'orders',
    summary: 'Parse a placement file (KiCad .pos, CSV, Altium)',
    body: ParseBody,
    check: checkBase64Body,
    bodyLimit: PARSE_BODY_LIMIT,
    answer: { kind: 'plain', field: 'parsed' },
  },
  { method: 'POST', path: '/orders/:oid/cancel', tag: 'orders', summary: 'Cancel an order', answer: envelope },
  { method: 'DELETE', path: '/orders/:oid', tag: 'orders', summary: 'Delete an order', answer: envelope },
  // §4.4 hardware
  { method: 'GET', path: '/hardware/position', tag: 'hardware', summary: 'Axis position x, y, z, r', answer: envelope },
  { method: 'GET', path: '/hardware/sync', tag: 'hardware', summary: 'Axis synchronisation state', answer: envelope },
  { method: 'POST', path: '/hardware/move', tag: 'hardware', summary: 'Move the head', body: MoveBody, answer: envelope },
  { method: 'POST', path: '/hardware/pump', tag: 'hardware', summary: 'Vacuum pump on or off', body: SwitchBody, answer: envelope },
  { method: 'POST', path: '/hardware/valve', tag: 'hardware', summary: 'Valve open or closed', body: SwitchBody, answer: envelope },
  { method: 'POST', path: '/hardware/light', tag: 'hardware', summary: 'Light on or off, brightness 0–255', body: LightBody, answer: envelope },
  { method: 'POST', path: '/hardware/pick', tag: 'hardware', summary: 'Pick a component', body: PickBody, answer: envelope },
  // §4.5 tasks
  { method: 'GET', path: '/tasks/current', tag: 'tasks', summary: 'Current or most recent task', answer: envelope },
  { method: 'GET', path: '/tasks/board_image', tag: 'tasks', summary: 'Image of the current board', answer: envelope },
  { method: 'POST', path: '/tasks/start', tag: 'tasks', summary: 'Start a task', body: TaskStartBody, answer: envelope },
  { method: 'POST', path: '/tasks/pause', tag: 'tasks', summary: 'Pause the task', answer: envelope },
  { method: 'POST', path: '/tasks/resume', tag: 'tasks', summary: 'Resume the task', answer: envelope },
  { method: 'POST', path: '/tasks/stop', tag: 'tasks', summary: 'Stop the task', answer: envelope },
  // §4.6 system
  { method: 'GET', path: '/system/status', tag: 'system', summary: 'System status', answer: envelope },
  { method: 'GET', path: '/system/settings', tag: 'system', summary: 'System settings', answer: envelope },
  { method: 'PUT', path: '/system/settings', tag: 'system', summary: 'Change one setting', body: SettingsBody, answer: envelope },
  { method: 'POST', path: '/system/settings/reset', tag: 'system', summary: 'Reset settings to factory defaults', answer: envelope },
  { method: 'POST', path: '/system/cal', tag: 'system', summary: 'Start calibration', answer: envelope },
  // §4.7 debug
  { method: 'GET', path: '/debug/ports', tag: 'debug', summary: 'Serial ports', answer: envelope },
  { method: 'GET', path: '/debug/status', tag: 'debug', summary: 'Debug system status', answer: envelope },
  { method: 'GET', path: '/debug/serial-log', tag: 'debug', summary: 'Serial communication log', answer: envelope },
  { method: 'POST', path: '/debug/send', tag: 'debug', summary: 'Send a command to the lower controller', body: DebugSendBody, answer: envelope },
  // §4.8 warehouse
  { method: 'GET', path: '/warehouse/components', tag: 'warehouse', summary: 'Component library', answer: envelope },
  { method: 'GET', path: '/warehouse/components/:cid', tag: 'warehouse', summary: 'One component', answer: envelope },
  { method: 'POST', path: '/warehouse/components', tag: 'warehouse', summary: 'Create a component', body: AnyObjectBody, answer: envelope },
  { method: 'PUT', path: '/warehouse/components/:cid', tag: 'warehouse', summary: 'Update a component', body: AnyObjectBody, answer: envelope },
  { method: 'DELETE', path: '/warehouse/components/:cid', tag: 'warehouse', summary: 'Delete a component', answer: envelope },
  { method: 'GET', path: '/warehouse/bom', tag: 'warehouse', summary: 'Current bill of materials', answer: envelope },
  { method: 'POST', path: '/warehouse/check-bom', tag: 'warehouse', summary: 'Check the BOM against stock', body: AnyObjectBody, answer: envelope },
  { method: 'GET', path: '/warehouse/order-availability', tag: 'warehouse', summary: 'Material availability for an order', answer: envelope },
  { method: 'GET', path: '/warehouse/feeder-slots', tag: 'warehouse', summary: 'Feeder slots and their load', answer: envelope },
  // §4.9 vision
  { method: 'GET', path: '/vision/status', tag: 'vision', summary: 'Vision status', answer: envelope },
  { method: 'GET', path: '/vision/model/status', tag: 'vision', summary: 'Current model', answer: envelope },
  { method: 'POST', path: '/vision/model/switch', tag: 'vision', summary: 'Switch the detection model', body: AnyObjectBody, answer: envelope },
  { method: 'GET', path: '/vision/target/status', tag: 'vision', summary: 'Current target', answer: envelope },
  { method: 'POST', path: '/vision/target/switch', tag: 'vision', summary: 'Switch the detection target', body: AnyObjectBody, answer: envelope },
  { method: 'POST', path: '/vision/detect/:cam', tag: 'vision', summary: 'Detect components with camera up or down', body: AnyObjectBody, answer: envelope },
  // §4.10 cameras
  { method: 'GET', path: '/cameras/status', tag: 'cameras', summary: 'Camera status (data.cameras)', answer: envelope },
  { method: 'GET', path: '/cameras/:cam/frame', tag: 'cameras', summary: 'Current frame of camera up or down', answer: envelope },
  // §4.11 extensions
  { method: 'GET', path: '/extensions', tag: 'extensions', summary: 'Installed extensions', answer: { kind: 'plain', field: 'extensions' } },
  { method: 'GET', path: '/extensions/marketplace', tag: 'extensions', summary: 'Extension marketplace', answer: { kind: 'plain', field: 'marketplace' } },
  { method: 'GET', path: '/extensions/stats', tag: 'extensions', summary: 'Extension usage statistics', answer: envelope },
  { method: 'POST', path: '/extensions/:eid/install', tag: 'extensions', summary: 'Install an extension', answer: envelope },
  { method: 'POST', path: '/extensions/:eid/uninstall', tag: 'extensions', summary: 'Uninstall an extension', answer: envelope },
]
