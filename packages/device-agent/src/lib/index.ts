/**
 * `@fleetgate/device-agent/lib`: the two small helpers the SDK needs and the fleetgate server
 * shares with it (one copy of each).
 */
export { crc32, crc32Hex, crc32Portable } from './crc32.js'
export { isPlainObject } from './is-plain-object.js'
