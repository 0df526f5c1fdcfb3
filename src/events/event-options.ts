import { INTEREST_PERIOD_MS } from './bus-interest.js'

/**
 * Timings and limits of the event stream. Only `buildApp` options change them (tests shorten
 * them); the contract fixes the defaults, so they are not environment variables.
 */
export interface EventOptions {
  /** A `: keep-alive` comment this often (contract: at least every 15 s). */
  keepAliveMs?: number
  /** Offline detection (gateway alive, platform online) and command expiry run this often (contract: within 5 s). */
  sweepIntervalMs?: number
  /** A stream whose socket holds more unsent bytes than this is dropped (slow consumer). */
  maxBufferedBytes?: number
  /** Open streams per user on one instance (contract: 10). */
  maxStreamsPerUser?: number
  /** `device-status` at most this often per device (contract: once a second). */
  statusIntervalMs?: number
  /** Several instances: how often each says whether it has streams (`BusInterest`; its grace and lifetime are multiples). */
  interestPeriodMs?: number
}

export const EVENT_DEFAULTS: Required<EventOptions> = {
  keepAliveMs: 10_000,
  sweepIntervalMs: 1_000,
  maxBufferedBytes: 1024 * 1024,
  maxStreamsPerUser: 10,
  statusIntervalMs: 1_000,
  interestPeriodMs: INTEREST_PERIOD_MS,
}

/** First line of every stream: how long a disconnected browser waits before reconnecting. */
export const RETRY_MS = 3000
/** Retry-After of the 429 answered to one stream too many. */
export const STREAM_LIMIT_RETRY_S = 10
