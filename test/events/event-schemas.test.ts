import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isFleetEvent } from '../../src/fleet-event.js'
import { bindingEvent } from '../../src/gateway/devices/binding-event.js'
import { releaseEvent } from '../../src/gateway/releases/release-event.js'
import { commandEvent } from '../../src/platform/commands/command-event.js'
import { COMMAND_STATUSES } from '../../src/platform/commands/command-record.js'
import { platformDeviceEvent } from '../../src/platform/devices/platform-device-event.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/** Contract §11's `data` fields of each kind, plus the `reason` fleetgate adds (docs/events.md). */
const DATA_FIELDS = {
  DeviceEvent: ['device_id', 'alive', 'registered', 'version', 'ip', 'last_heartbeat', 'at', 'reason'],
  DeviceStatusEvent: ['device_id', 'status', 'at'],
  BindingEvent: ['username', 'device_id', 'bound', 'at'],
  ReleaseEvent: ['release_id', 'display_version', 'active', 'at', 'reason'],
  PlatformDeviceEvent: ['device_id', 'online', 'last_online_at', 'at', 'reason'],
  CommandEvent: ['device_id', 'id', 'action', 'status', 'attempts', 'at'],
  MachineStateEvent: ['device_id', 'state', 'reason', 'at'],
}

type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[]; enum?: unknown[]; description?: string }

describe('the event kinds in /openapi.json', () => {
  let t: TestApp
  let schemas: Record<string, Schema>
  let description: string
  beforeAll(async () => {
    t = await startTestApp(DIALECTS[0]!)
    const doc = (await t.app.inject('/openapi.json')).json()
    schemas = doc.components.schemas
    description = doc.paths['/api/v1/events'].get.description
  })
  afterAll(() => t?.close())

  it('lists the data of each of the six kinds of §11 with its fields, all required', () => {
    for (const [name, fields] of Object.entries(DATA_FIELDS)) {
      const schema = schemas[name]
      expect(schema, `components.schemas.${name}`).toBeDefined()
      expect(schema!.type).toBe('object')
      expect(Object.keys(schema!.properties ?? {}), name).toEqual(fields)
      expect([...(schema!.required ?? [])].sort(), name).toEqual([...fields].sort())
    }
  })

  it("gives a command's status as the command record's statuses", () => {
    expect(schemas.CommandEvent!.properties!.status!.enum).toEqual([...COMMAND_STATUSES])
  })

  it('names the schemas from the description of GET /api/v1/events', () => {
    for (const name of Object.keys(DATA_FIELDS)) expect(description).toContain(name)
    expect(schemas.DeviceStatusEvent!.description).toContain('event: device-status')
  })
})

describe('an event from another instance', () => {
  it('is accepted when it is one of the kinds with its data, as the features build them', () => {
    const row = { device_id: 'pnp-1', id: 7, action: 'reboot', status: 'delivered', attempts: 1 }
    const machineState = { kind: 'machine-state', data: { device_id: 'pnp-1', state: 'productive', reason: null, at: 1 } }
    for (const event of [bindingEvent('alice', 'pnp-1', true), releaseEvent('r-1', '1.0.0', false, 'uploaded'), platformDeviceEvent('pnp-1', true, 1, 'online'), commandEvent(row), machineState]) {
      expect(isFleetEvent(event), JSON.stringify(event)).toBe(true)
    }
  })

  it('is ignored when its kind is unknown or its data lacks a field', () => {
    expect(isFleetEvent({ kind: 'rumour', data: {} })).toBe(false)
    expect(isFleetEvent({ kind: 'binding', data: { username: 'alice', device_id: 'pnp-1', at: 1 } })).toBe(false)
    expect(isFleetEvent({ kind: 'command', data: { device_id: 'pnp-1', id: 7, action: 'reboot', status: 'done', at: 1 } })).toBe(false)
  })

  it('raises no command event for a status outside the record’s list', () => {
    expect(commandEvent({ device_id: 'pnp-1', id: 7, action: 'reboot', status: 'lost', attempts: 1 })).toBeUndefined()
  })
})
