/**
 * Subjects of the NATS device bus. A device id may contain `.`, the subject token separator,
 * and may start with one (an empty token is invalid): `.` is written `%2E`, which no id contains.
 */
const PREFIX = 'fleetgate'

const token = (id: string) => id.replaceAll('.', '%2E')

export const natsSubjects = {
  /** Request-reply: a forwarded call to the device (call-message.ts); only the instance holding its link subscribes. */
  call: (deviceId: string) => `${PREFIX}.device.${token(deviceId)}.call`,
  /** Request-reply: the same as JSON `{call, timeout_ms}`, as instances before the call subject send and answer it. */
  request: (deviceId: string) => `${PREFIX}.device.${token(deviceId)}.request`,
  /** Request-reply: take over or close the device's link (the holder answers once done). */
  control: (deviceId: string) => `${PREFIX}.device.${token(deviceId)}.control`,
  /** Every subject of the device: the holder subscribes once (a subscription costs about 1 KB of heap per link). */
  device: (deviceId: string) => `${PREFIX}.device.${token(deviceId)}.*`,
  /** Request-reply: live state of devices linked to one instance. */
  live: (instanceId: string) => `${PREFIX}.instance.${token(instanceId)}.live`,
  /** Publish: bindings removed on some instance (every instance drops them from its cache). */
  bindingsRemoved: `${PREFIX}.bindings.removed`,
  /** Chunks of one message too large for the server's max_payload. */
  blob: (blobId: string) => `${PREFIX}.blob.${blobId}`,
}
