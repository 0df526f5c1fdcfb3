import { ok, RouteError, type RouteTable } from '@fleetgate/device-agent'
import { renderBoardImage, renderLowerView, renderUpperView, type CameraFrame } from './camera-views.js'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'

export interface CameraOptions {
  /** What `GET /cameras/status` reports for the sensors. Default 640x480. */
  resolution?: string
  /** Size of the PNG previews the frame endpoints render; small keeps them cheap. Default 160x120. */
  previewWidth?: number
  previewHeight?: number
}

/** `up` is the head camera looking down at the board; `down` the fixed camera looking up at the nozzle. */
export class Cameras {
  readonly resolution: string
  private readonly width: number
  private readonly height: number

  constructor(
    private readonly machine: PickAndPlaceMachine,
    options: CameraOptions = {},
  ) {
    this.resolution = options.resolution ?? '640x480'
    this.width = options.previewWidth ?? 160
    this.height = options.previewHeight ?? 120
  }

  frame(cam: 'up' | 'down'): CameraFrame {
    return cam === 'up' ? renderUpperView(this.machine, this.width, this.height) : renderLowerView(this.machine, this.width, this.height)
  }

  boardImage(): CameraFrame {
    return renderBoardImage(this.machine, this.width, this.height)
  }
}

export function registerCameraRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { cameras } = machine
  routes.get('/cameras/status', () =>
    ok({
      cameras: {
        up: { connected: true, resolution: cameras.resolution },
        down: { connected: true, resolution: cameras.resolution },
      },
    }),
  )
  routes.get('/cameras/:cam/frame', ({ params }) => {
    const cam = params.cam
    if (cam !== 'up' && cam !== 'down') throw new RouteError(400, 'bad_request', 'cam must be up or down')
    return ok({ ...cameras.frame(cam), camera: cam, captured_at: toSeconds(machine.clock.now()) })
  })
}
