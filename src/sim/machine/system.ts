import { Type } from '@sinclair/typebox'
import { ok, type RouteTable } from '@fleetgate/device-agent'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'
import { conflict, parseBody } from './validate-body.js'

const SettingBody = Type.Object({ key: Type.String({ minLength: 1 }), value: Type.Unknown() })

export function registerSystemRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { settings, calibration } = machine

  routes.get('/system/status', () => {
    const uptimeMs = machine.clock.now() - machine.startedAt
    const task = machine.tasks.current()
    return ok({
      state: machine.state(),
      device_id: machine.deviceId,
      firmware_version: machine.firmwareVersion,
      uptime_s: Math.floor(uptimeMs / 1000),
      // A slow, bounded drift so charts of it look alive.
      temperature_c: Math.round((38 + 2 * Math.sin(uptimeMs / 600_000)) * 10) / 10,
      vacuum_kpa: machine.hardware.pump ? -62 : 0,
      calibration: calibration.status(),
      task: task && { id: task.id, state: task.state, placed: task.placed, total: task.total },
      position: machine.axes.position(),
      errors: [],
      time: toSeconds(machine.clock.now()),
    })
  })

  routes.get('/system/settings', () => ok({ settings: settings.all() }))

  routes.put('/system/settings', ({ body }) => {
    const { key, value } = parseBody(SettingBody, body)
    settings.set(key, value)
    return ok({ updated: true, key, value, settings: settings.all() })
  })

  routes.post('/system/settings/reset', () => {
    settings.reset()
    return ok({ reset: true, settings: settings.all() })
  })

  routes.post('/system/cal', () => {
    if (calibration.running()) throw conflict('calibrating', 'calibration is already running')
    machine.assertIdle()
    calibration.start()
    const home = { x: 0, y: 0, z: 0, r: 0 }
    machine.axes.plan(machine.axes.position(), home, machine.clock.now(), calibration.durationMs)
    return ok({ started: true, eta_ms: calibration.durationMs, calibration: calibration.status() })
  })
}
