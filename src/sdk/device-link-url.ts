import { DEVICE_LINK_PATH } from '../protocol/frames.js'

const WS_PROTOCOLS: Record<string, string> = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' }

/**
 * The device-link WebSocket URL for a gateway base URL: `http://h:8080` → `ws://h:8080/api/v1/device-link`,
 * `https://h/fleet` → `wss://h/fleet/api/v1/device-link`. A URL already ending in the link path is kept.
 */
export function deviceLinkUrl(base: string): string {
  const url = new URL(base)
  const protocol = WS_PROTOCOLS[url.protocol]
  if (!protocol) throw new TypeError(`unsupported gateway URL scheme ${url.protocol} (use http, https, ws or wss)`)
  url.protocol = protocol
  if (!url.pathname.endsWith(DEVICE_LINK_PATH)) url.pathname = url.pathname.replace(/\/+$/, '') + DEVICE_LINK_PATH
  url.search = ''
  url.hash = ''
  return url.toString()
}
