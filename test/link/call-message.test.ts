import { parseFrame, requestFrameHead, requestFrameText } from '@fleetgate/device-agent/protocol'
import { describe, expect, it } from 'vitest'
import { callMessageText, parseCallMessage } from '../../src/link/bus/call-message.js'

const call = {
  method: 'POST' as const,
  path: '/cameras/top/"quoted"\\',
  query: { tag: ['a', 'b"'], q: 'caf\u00e9 & </script>' },
  body: { x: 1.5, note: 'line\nbreak \u2028 \ud83d\ude00', nested: [1, null, true] },
  user: { id: 'wechat_o\u00e9"\\x', username: 'alice', role: 'operator' },
}

describe('the call message between instances', () => {
  it('is JSON an older instance can read, and gives the holder the exact frame a local call sends', () => {
    const text = callMessageText(call, 1500)
    expect(JSON.parse(text)).toEqual({ timeout_ms: 1500, ...JSON.parse(JSON.stringify(call)) })
    const message = parseCallMessage(text)!
    expect(message.timeoutMs).toBe(1500)
    const frame = requestFrameHead('r7') + message.fields
    expect(frame).toBe(requestFrameText('r7', call))
    expect(parseFrame(frame)).toEqual(JSON.parse(JSON.stringify({ type: 'request', id: 'r7', ...call })))
  })

  it('refuses a message that is not a call or whose time-out no timer can hold', () => {
    const fields = callMessageText(call, 1).slice('{"timeout_ms":1,'.length)
    for (const text of [
      '',
      'null',
      JSON.stringify({ call, timeout_ms: 1500 }),
      `{"timeout_ms":1500}`,
      `{"timeout_ms":"1500",${fields}`,
      `{"timeout_ms":0,${fields}`,
      `{"timeout_ms":-5,${fields}`,
      `{"timeout_ms":NaN,${fields}`,
      `{"timeout_ms":1e400,${fields}`,
      `{"timeout_ms":2147483648,${fields}`,
      `{"timeout_ms":,${fields}`,
    ]) {
      expect(parseCallMessage(text), text.slice(0, 40)).toBeUndefined()
    }
    expect(parseCallMessage(`{"timeout_ms":2147483647,${fields}`)?.timeoutMs).toBe(2147483647)
  })
})
