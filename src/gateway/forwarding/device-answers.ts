import { AppError } from '../../errors.js'
import { isPlainObject } from '@fleetgate/device-agent/lib'
import type { DeviceAnswer } from '../../link/bus/device-bus.js'


/** The device's own message for an error answer, else a generic one. */
export function deviceMessage(answer: DeviceAnswer): string {
  const message = isPlainObject(answer.data) ? answer.data.message : undefined
  return typeof message === 'string' && message !== '' ? message : `Device answered with status ${answer.status}`
}

/** A device error passed through with its status: `{success:false, error:"device_error", message, status, data}`. */
export const deviceError = (answer: DeviceAnswer): AppError =>
  new AppError('device_error', deviceMessage(answer), { status: answer.status, data: answer.data ?? null }, answer.status)

export const badDeviceResponse = (message: string) => new AppError('bad_device_response', message)

/** HTTP cannot carry a 1xx as a final answer; such a device status is a bad response. */
export function assertFinalStatus(answer: DeviceAnswer): void {
  if (answer.status < 200) throw badDeviceResponse(`Device answered with status ${answer.status}, which is not a final HTTP status`)
}
