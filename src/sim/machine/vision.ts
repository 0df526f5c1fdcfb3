import { Type } from '@sinclair/typebox'
import { ok, RouteError, type RouteTable } from '@fleetgate/device-agent'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'
import { badRequest, parseBody } from './validate-body.js'

const MODELS = [
  { name: 'pnp-yolo-v3', version: '3.2.0', input_size: '320x320' },
  { name: 'pnp-yolo-v3-tiny', version: '3.2.0', input_size: '224x224' },
  { name: 'template-match', version: '1.0.4', input_size: 'any' },
] as const
const TARGETS = ['component', 'fiducial', 'nozzle', 'pad'] as const

const ModelSwitchBody = Type.Object({ model: Type.String({ minLength: 1 }) })
const TargetSwitchBody = Type.Object({ target: Type.String({ minLength: 1 }) })

const FRAME = { width: 640, height: 480 }

export class VisionState {
  model: string = MODELS[0].name
  target: string = TARGETS[0]
  detections = 0
  lastDetectionAt: number | null = null
}

export function registerVisionRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { vision } = machine
  const modelInfo = () => MODELS.find((m) => m.name === vision.model)!

  routes.get('/vision/status', () =>
    ok({
      enabled: machine.settings.get<boolean>('vision_enabled'),
      running: true,
      model: vision.model,
      target: vision.target,
      fps: 12,
      cameras: { up: true, down: true },
      detections: vision.detections,
      last_detection_at: vision.lastDetectionAt,
    }),
  )

  routes.get('/vision/model/status', () => ok({ model: { ...modelInfo(), loaded: true }, available: MODELS.map((m) => m.name) }))

  routes.post('/vision/model/switch', ({ body }) => {
    const { model } = parseBody(ModelSwitchBody, body)
    if (!MODELS.some((m) => m.name === model)) throw badRequest('unknown_model', `unknown model "${model}"; available: ${MODELS.map((m) => m.name).join(', ')}`)
    vision.model = model
    return ok({ switched: true, model: { ...modelInfo(), loaded: true } })
  })

  routes.get('/vision/target/status', () => ok({ target: vision.target, available: TARGETS }))

  routes.post('/vision/target/switch', ({ body }) => {
    const { target } = parseBody(TargetSwitchBody, body)
    if (!(TARGETS as readonly string[]).includes(target)) throw badRequest('unknown_target', `unknown target "${target}"; available: ${TARGETS.join(', ')}`)
    vision.target = target
    return ok({ switched: true, target })
  })

  routes.post('/vision/detect/:cam', ({ params }) => {
    const cam = params.cam!
    if (cam !== 'up' && cam !== 'down') throw new RouteError(400, 'bad_request', 'cam must be up or down')
    if (!machine.settings.get<boolean>('vision_enabled')) throw new RouteError(409, 'vision_disabled', 'vision is disabled in the settings')
    vision.detections++
    vision.lastDetectionAt = toSeconds(machine.clock.now())
    return ok({ camera: cam, model: vision.model, target: vision.target, detections: detect(machine, cam), elapsed_ms: 38 })
  })
}

/**
 * Deterministic detections from the machine state: the lower camera sees the part on the nozzle
 * (if any), the upper camera sees what lies under the head.
 */
function detect(machine: PickAndPlaceMachine, cam: 'up' | 'down') {
  const position = machine.axes.position()
  const target = machine.vision.target
  const box = (cx: number, cy: number, w: number, h: number) => [Math.round(cx - w / 2), Math.round(cy - h / 2), w, h]
  if (cam === 'down') {
    const held = machine.hardware.holding
    if (!held) return []
    // Small, repeatable pick offset derived from the pick position.
    const dx = ((held.x * 7) % 5) - 2.5
    const dy = ((held.y * 3) % 5) - 2.5
    return [
      {
        label: held.component_id,
        confidence: 0.97,
        bbox: box(FRAME.width / 2 + dx * 10, FRAME.height / 2 + dy * 10, 120, 64),
        offset_mm: { x: Math.round(dx * 10) / 100, y: Math.round(dy * 10) / 100 },
        angle: ((held.angle % 360) + 360) % 360,
      },
    ]
  }
  const seed = Math.floor(position.x * 13 + position.y * 7)
  const count = 1 + (seed % 3)
  return Array.from({ length: count }, (_, i) => {
    const cx = 160 + ((seed * (i + 3)) % 320)
    const cy = 120 + ((seed * (i + 5)) % 240)
    return {
      label: target,
      confidence: Math.round((0.82 + ((seed + i) % 17) / 100) * 100) / 100,
      bbox: box(cx, cy, target === 'fiducial' ? 40 : 70, 40),
      center_mm: { x: Math.round((position.x + (cx - FRAME.width / 2) * 0.05) * 100) / 100, y: Math.round((position.y + (cy - FRAME.height / 2) * 0.05) * 100) / 100 },
      angle: (seed * (i + 1) * 15) % 360,
    }
  })
}
