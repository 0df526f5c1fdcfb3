import type { FastifyBaseLogger } from 'fastify'
import { PeriodicTask } from '../lib/periodic-task.js'
import type { EventPublisher } from '../events/event-bus.js'
import type { Db } from '../storage/storage.js'
import type { CommandQueue } from './commands/command-queue.js'
import { sweepPlatformOffline } from './devices/device-liveness.js'
import { platformDeviceEvent, type PlatformDeviceEvent } from './devices/platform-device-event.js'

export interface PlatformSweepParts {
  db: Db
  bus: EventPublisher<PlatformDeviceEvent>
  commands: CommandQueue
  offlineMs: number
}

/**
 * Time-driven Platform transitions, raised within one interval: devices going offline and
 * commands expiring or failing. Every instance runs it; the database decides each transition
 * once (conditional UPDATEs), so each event is raised once. Runs never overlap. `now` is the
 * devices' heartbeat time; the command queue keeps its times on the database's clock.
 */
export class PlatformSweep {
  private readonly task: PeriodicTask

  constructor(
    private readonly parts: PlatformSweepParts,
    log: FastifyBaseLogger,
  ) {
    this.task = new PeriodicTask(
      () => this.runOnce(),
      (err) => log.error({ err }, 'event sweep failed'),
    )
  }

  async runOnce(now = Date.now()): Promise<void> {
    const { db, bus, commands, offlineMs } = this.parts
    for (const device of await sweepPlatformOffline(db, now - offlineMs)) {
      bus.publish(platformDeviceEvent(device.device_id, false, device.last_online_at, 'offline', now))
    }
    await commands.sweep()
  }

  start(intervalMs: number): void {
    this.task.start(intervalMs)
  }

  stop(): Promise<void> {
    return this.task.stop()
  }
}
