import type { RawData } from 'ws'

/** A WebSocket message as text, whatever shape `ws` handed it over in (Buffer, fragments, ArrayBuffer). */
export function rawDataText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  return Buffer.from(data).toString('utf8')
}
