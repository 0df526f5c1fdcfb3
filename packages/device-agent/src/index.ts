/**
 * `@fleetgate/device-agent`: what a pick-and-place machine installs to link to fleetgate (contract §4).
 * `DeviceAgent` keeps the link, `RouteTable` answers the forwarded requests; the frame schemas,
 * limits and close codes are here too (and, with the rest of the protocol, in `./protocol`).
 */
export * from './protocol/frames.js'
export * from './protocol/production.js'
export * from './protocol/close-codes.js'
export * from './protocol/limits.js'
export { RouteTable, RouteError, ok, created, type RouteHandler, type RouteRequest, type RouteResult, type RouteMatch } from './route-table.js'
export {
  DeviceAgent,
  DeviceAgentError,
  type AgentErrorReason,
  type AgentLog,
  type AgentState,
  type DeviceAgentEvents,
  type DeviceAgentOptions,
  type DisconnectInfo,
  type StatusProvider,
  type StopReason,
} from './device-agent.js'
export { Backoff, type BackoffOptions } from './backoff.js'
export { deviceLinkUrl, gatewayHttpUrl } from './device-link-url.js'
export type { FirmwareHandler, FirmwareOffer, FirmwareOptions, FirmwareStatus, RunningFirmware } from './firmware-handler.js'
export { firmwareStatusFrame } from './firmware-status-outbox.js'
export { imageMismatches, type ImageDigests } from './image-mismatches.js'
export { downloadResumable, DownloadError, type DownloadOptions } from './resumable-download.js'
export {
  ProductionReporter,
  MAX_PRODUCTION_EVENT_BYTES,
  MAX_UNACKED_PRODUCTION_FRAMES,
  type DroppedInfo,
  type ProductionEventInput,
  type ProductionOptions,
  type ProductionReporterEvents,
  type RejectedInfo,
} from './production-reporter.js'
