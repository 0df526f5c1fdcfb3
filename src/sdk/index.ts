export * from '../protocol/frames.js'
export { RouteTable, RouteError, ok, created, type RouteHandler, type RouteRequest, type RouteResult, type RouteMatch } from './route-table.js'
export {
  DeviceAgent,
  DeviceAgentError,
  FATAL_CLOSE_CODES,
  type AgentLog,
  type AgentState,
  type DeviceAgentEvents,
  type DeviceAgentOptions,
  type DisconnectInfo,
  type FatalReason,
  type StatusProvider,
  type StopReason,
} from './device-agent.js'
export { Backoff, type BackoffOptions } from './backoff.js'
export { deviceLinkUrl } from './device-link-url.js'
