import { delay } from '../../lib/time.js'
import type { FirmwareHandler, FirmwareOffer, RunningFirmware } from '@fleetgate/device-agent'
import type { PickAndPlaceMachine } from './machine.js'

/** The motion controller's firmware (the "slave" releases of contract §6), as the heartbeat reports it. */
export interface ControllerFirmware {
  display_version: string
  release_id?: string
  image_version?: number
  sha256?: string
}

export interface ControllerFirmwareOptions {
  /** Simulated flashing time. */
  installMs: number
  /** Report every install `failed` (`fleetgate sim --fail-firmware`). */
  fail: boolean
  /** Called once the image is in place: the machine re-links as after a reboot. */
  relink: () => void
}

const INSTALL_STEPS = 10

/**
 * Takes firmware offers as contract §14 asks of the simulator: busy while its task is running or
 * paused; else flashes in `installMs`, switches the controller version its heartbeat reports and
 * re-links (the agent reports `installed` on the new link).
 */
export class ControllerFirmwareHandler implements FirmwareHandler {
  constructor(
    private readonly machine: PickAndPlaceMachine,
    private readonly options: ControllerFirmwareOptions,
  ) {}

  isBusy(): boolean {
    const state = this.machine.tasks.current()?.state
    return state === 'running' || state === 'paused'
  }

  current(): RunningFirmware {
    const { sha256, image_version } = this.machine.controllerFirmware
    return { sha256, image_version }
  }

  async install(_image: Buffer, offer: FirmwareOffer, progress: (percent: number) => void): Promise<void> {
    if (this.options.fail) throw new Error('verification failed on the machine (simulated)')
    for (let step = 1; step <= INSTALL_STEPS; step++) {
      if (this.options.installMs > 0) await delay(this.options.installMs / INSTALL_STEPS)
      progress((step * 100) / INSTALL_STEPS)
    }
    const { release_id, image_version, display_version, sha256 } = offer
    this.machine.installControllerFirmware({ release_id, image_version, display_version, sha256 })
    this.options.relink()
  }
}
