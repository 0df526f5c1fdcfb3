import { describe, expect, it } from 'vitest'
import { SseParser } from './sse-parser'

describe('SSE parser', () => {
  it('reads events split across chunks, skips comments, remembers retry', () => {
    const p = new SseParser()
    expect(p.push('retry: 3000\n\n: keep-alive\n\nid: 1\nevent: dev')).toEqual([])
    expect(p.retry).toBe(3000)
    expect(p.push('ice\ndata: {"device_id":"pnp-01",')).toEqual([])
    expect(p.push('"alive":false}\n\n')).toEqual([{ id: '1', event: 'device', data: '{"device_id":"pnp-01","alive":false}' }])
  })

  it('joins multi-line data and accepts CRLF', () => {
    const p = new SseParser()
    expect(p.push('event: x\r\ndata: a\r\ndata: b\r\n\r\n')).toEqual([{ id: undefined, event: 'x', data: 'a\nb' }])
  })

  it('names an event without event: "message" and drops one without data', () => {
    const p = new SseParser()
    expect(p.push('event: lonely\n\ndata: hi\n\n')).toEqual([{ id: undefined, event: 'message', data: 'hi' }])
  })
})
