import { Type } from '@sinclair/typebox'
import { ok, RouteError, type RouteTable } from '@fleetgate/device-agent'
import { limitViolation, MAX_SPEED_MM_S, type Position } from './axes.js'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'
import { parseBody } from './validate-body.js'

const MoveBody = Type.Object({
  x: Type.Optional(Type.Number()),
  y: Type.Optional(Type.Number()),
  z: Type.Optional(Type.Number()),
  r: Type.Optional(Type.Number()),
  speed: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: MAX_SPEED_MM_S })),
  relative: Type.Optional(Type.Boolean()),
})
const SwitchBody = Type.Object({ state: Type.Boolean() })
const LightBody = Type.Object({ state: Type.Boolean(), brightness: Type.Optional(Type.Integer({ minimum: 0, maximum: 255 })) })
const PickBody = Type.Object({ component_id: Type.String({ minLength: 1 }), x: Type.Number(), y: Type.Number(), angle: Type.Number() })

/** Height at which the nozzle touches a part in a feeder or on the board. */
const PICK_HEIGHT_MM = 2

interface PickRecord {
  component_id: string
  x: number
  y: number
  angle: number
  picked_at: number
}

/** Actuators beside the axes: vacuum pump, valve, ring light, and the part on the nozzle. */
export class Hardware {
  pump = false
  valve = false
  light = { state: false, brightness: 0 }
  holding: PickRecord | null = null
  readonly picks: PickRecord[] = []
  lastSyncAt: number | null = null

  recordPick(pick: PickRecord): void {
    this.holding = pick
    this.picks.unshift(pick)
    this.picks.length = Math.min(this.picks.length, 50)
  }
}

export function registerHardwareRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { axes, hardware, clock } = machine

  routes.get('/hardware/position', () => ok(axes.position()))

  routes.get('/hardware/sync', () => {
    hardware.lastSyncAt = toSeconds(clock.now())
    const position = axes.position()
    const target = axes.target()
    const axis = (name: keyof Position) => ({ position: position[name], target: target[name], in_sync: position[name] === target[name] })
    return ok({
      synced: !axes.moving(),
      homed: machine.calibration.everCompleted(),
      moving: axes.moving(),
      axes: { x: axis('x'), y: axis('y'), z: axis('z'), r: axis('r') },
      synced_at: hardware.lastSyncAt,
    })
  })

  routes.post('/hardware/move', ({ body }) => {
    const move = parseBody(MoveBody, body)
    if (move.x === undefined && move.y === undefined && move.z === undefined && move.r === undefined) {
      throw new RouteError(400, 'bad_request', 'a move needs at least one of x, y, z, r')
    }
    machine.assertIdle()
    // A move issued while moving starts from where the head is now.
    const here = axes.position()
    const axis = (name: keyof Position) => {
      const value = move[name]
      if (value === undefined) return here[name]
      return move.relative ? here[name] + value : value
    }
    const target = { x: axis('x'), y: axis('y'), z: axis('z'), r: axis('r') }
    const violation = limitViolation(target)
    if (violation) throw new RouteError(400, 'out_of_range', violation, { target })
    const eta = axes.moveTo(target, move.speed ?? machine.settings.get<number>('speed_mm_s'))
    return ok({ accepted: true, target: axes.target(), eta_ms: eta })
  })

  routes.post('/hardware/pump', ({ body }) => {
    hardware.pump = parseBody(SwitchBody, body).state
    if (!hardware.pump) hardware.holding = null
    return ok({ pump: hardware.pump, vacuum_kpa: hardware.pump ? -62 : 0 })
  })

  routes.post('/hardware/valve', ({ body }) => {
    hardware.valve = parseBody(SwitchBody, body).state
    if (hardware.valve) hardware.holding = null // opening the valve releases the part
    return ok({ valve: hardware.valve })
  })

  routes.post('/hardware/light', ({ body }) => {
    const light = parseBody(LightBody, body)
    const brightness = light.brightness ?? (light.state ? machine.settings.get<number>('light_brightness') : 0)
    hardware.light = { state: light.state, brightness: light.state ? brightness : 0 }
    return ok({ light: hardware.light })
  })

  routes.post('/hardware/pick', ({ body }) => {
    const pick = parseBody(PickBody, body)
    machine.assertIdle()
    const target = { x: pick.x, y: pick.y, z: PICK_HEIGHT_MM, r: pick.angle }
    const violation = limitViolation(target)
    if (violation) throw new RouteError(400, 'out_of_range', violation, { target })
    const eta = axes.moveTo(target, machine.settings.get<number>('speed_mm_s'))
    hardware.pump = true
    hardware.valve = false
    hardware.recordPick({ component_id: pick.component_id, x: pick.x, y: pick.y, angle: pick.angle, picked_at: toSeconds(clock.now() + eta) })
    return ok({ picked: true, component_id: pick.component_id, target: axes.target(), eta_ms: eta, vacuum_kpa: -62 })
  })
}
