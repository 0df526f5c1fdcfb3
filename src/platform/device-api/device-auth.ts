import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { AppError } from '../../errors.js'
import { findDevice } from '../devices/device-store.js'
import type { DeviceRow } from '../devices/device-record.js'
import type { DeviceGate } from '../telemetry/telemetry-store.js'
import { sameDigest, sha256 } from '../../auth/secrets.js'

export const DEVICE_TOKEN_HEADER = 'x-device-token'

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/** True when the request carries the right X-Console-Token (checked and limited once per request by `ConsoleTokenGuard`). */
export const hasConsoleToken = (request: FastifyRequest): boolean => request.consoleAuthenticated

/**
 * Who may act as a device: anyone when tokens are not required; else the holder of the
 * device's token (or the console, which may act for any device).
 */
export class DeviceAuth {
  constructor(private readonly deps: AppDeps) {}

  get tokenRequired(): boolean {
    return this.deps.config.platformRequireDeviceToken
  }

  /** The device, or 404 `unknown_device`; 401 when a required token is missing or wrong. */
  async require(request: FastifyRequest, deviceId: string): Promise<DeviceRow> {
    const device = await findDevice(this.deps.storage.db, deviceId)
    if (!device) throw unknownDevice(deviceId)
    this.checkToken(request, device)
    return device
  }

  /**
   * `require`'s decision for a store that reads the device itself, in its write's transaction
   * (see `DeviceGate`). With tokens required it is also made now, before the write waits for a
   * commit: a client without the device's token takes no room in the store's queue.
   */
  async gate(request: FastifyRequest, deviceId: string): Promise<DeviceGate> {
    if (this.tokenRequired) await this.require(request, deviceId)
    return (device) => (device ? this.tokenError(request, device) : unknownDevice(deviceId))
  }

  checkToken(request: FastifyRequest, device: Pick<DeviceRow, 'token_hash'>): void {
    const error = this.tokenError(request, device)
    if (error) throw error
  }

  private tokenError(request: FastifyRequest, device: Pick<DeviceRow, 'token_hash'>): AppError | undefined {
    if (!this.tokenRequired) return undefined
    const presented = header(request, DEVICE_TOKEN_HEADER)
    if (presented !== undefined && device.token_hash !== null && sameDigest(sha256(presented), Buffer.from(device.token_hash, 'hex'))) return undefined
    if (hasConsoleToken(request)) return undefined
    return new AppError('unauthorized', presented === undefined ? 'X-Device-Token required' : 'Wrong device token')
  }
}

export const unknownDevice = (deviceId: string) => new AppError('unknown_device', `Unknown device ${deviceId}`)
