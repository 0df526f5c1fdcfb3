import { DEVICE_LINK_PATH } from './protocol/frames.js'

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

/**
 * The HTTP URL of a path the gateway sent (a firmware offer's `url`), on the gateway the link goes
 * to: `wss://h/fleet/api/v1/device-link` + `/api/v1/firmware/…` → `https://h/fleet/api/v1/firmware/…`.
 * Only the path and query of `path` are used, so an offer can never point the device at another host.
 */
export function gatewayHttpUrl(base: string, path: string): string {
  const url = new URL(deviceLinkUrl(base))
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:'
  const prefix = url.pathname.slice(0, -DEVICE_LINK_PATH.length)
  const target = new URL(path, 'http://gateway.invalid')
  url.pathname = prefix + target.pathname
  url.search = target.search
  return url.toString()
}
