import type { AppDeps } from '../app-deps.js'
import type { Db } from '../storage/storage.js'
import { CommandQueue } from './commands/command-queue.js'
import { DeviceAuth } from './device-api/device-auth.js'
import { TelemetryStore } from './telemetry/telemetry-store.js'

/** What the platform's routes share, built once per app. */
export interface PlatformServices {
  deps: AppDeps
  db: Db
  access: DeviceAuth
  commands: CommandQueue
  telemetry: TelemetryStore
  /** Heartbeats at or after this time mean online. */
  onlineSince(now: number): number
}

export function createPlatformServices(deps: AppDeps): PlatformServices {
  const { config } = deps
  const db = deps.storage.db
  return {
    deps,
    db,
    access: new DeviceAuth(deps),
    commands: new CommandQueue(deps.storage, {
      ackTimeoutMs: config.commandAckTimeoutSeconds * 1000,
      maxAttempts: config.commandMaxAttempts,
      ttlMs: config.commandTtlSeconds * 1000,
    }, deps.events),
    telemetry: new TelemetryStore(deps.storage, { writers: deps.storage.concurrentWriters, gatherTurn: deps.storage.synchronousWrites }),
    onlineSince: (now) => now - config.platformOfflineSeconds * 1000,
  }
}
