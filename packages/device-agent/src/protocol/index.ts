/**
 * `@fleetgate/device-agent/protocol`: the device link of contract §4 as both ends speak it —
 * frames (TypeBox schemas, types, checked parsers), limits, close codes, the identifier rule,
 * request ids and the frame writers. The gateway and the device agent import it from here.
 */
export * from './frames.js'
export * from './production.js'
export * from './close-codes.js'
export * from './limits.js'
export * from './ids.js'
export { RequestIds } from './request-ids.js'
export { sendBatched } from './batched-send.js'
export { requestFrameFields, requestFrameHead, requestFrameText, responseFrameText } from './frame-text.js'
export * from './raw-data.js'
