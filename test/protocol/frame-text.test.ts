import { describe, expect, it } from 'vitest'
import { parseFrame, requestFrameText, responseFrameText } from '@fleetgate/device-agent/protocol'

const users = [
  { id: 'u1', username: 'alice', role: 'user' },
  { id: 'wechat_o\u00e9"\\x', username: 'line\nbreak \u2028 \ud83d\ude00', role: 'admin' },
]
const queries = [{}, Object.assign(Object.create(null), { n: '1' }), { tag: ['a', 'b"'], q: 'caf\u00e9 & </script>' }]
const bodies = [null, { x: 1.5, nested: { list: [1, 'two', null, true] } }, 'text', 0, false, [], { at: new Date(0) }]
const paths = ['/hardware/position', '/orders/ord%3A1', '/cameras/top/"quoted"\\']

describe('frame texts', () => {
  it('write a request frame exactly as JSON.stringify of the whole frame does', () => {
    let n = 0
    for (const user of users)
      for (const query of queries)
        for (const body of bodies)
          for (const path of paths) {
            const id = `r${++n}"\\`
            const call = { method: 'PATCH' as const, path, query, body, user }
            const text = requestFrameText(id, call)
            expect(text).toBe(JSON.stringify({ type: 'request', id, ...call }))
            expect(parseFrame(text)).toEqual(JSON.parse(JSON.stringify({ type: 'request', id, ...call })))
          }
  })

  it('write a user met again from its cached text, and a changed user object afresh', () => {
    const user = { id: 'u1', username: 'alice', role: 'user' }
    const call = { method: 'GET' as const, path: '/a', query: {}, body: null, user }
    expect(requestFrameText('1', call)).toBe(requestFrameText('1', { ...call, user: { ...user } }))
    const other = { id: 'u2', username: 'bob', role: 'admin' }
    expect(JSON.parse(requestFrameText('2', { ...call, user: other })).user).toEqual(other)
  })

  it('write a response frame exactly as JSON.stringify does, null for absent data', () => {
    for (const data of [...bodies, { error: 'e', message: 'quote " and \u0000' }]) {
      expect(responseFrameText('id"1', 201, data)).toBe(JSON.stringify({ type: 'response', id: 'id"1', status: 201, data }))
    }
    expect(responseFrameText('a', 200, undefined)).toBe('{"type":"response","id":"a","status":200,"data":null}')
    expect(responseFrameText('a', 200, () => 1)).toBe('{"type":"response","id":"a","status":200,"data":null}')
    expect(() => responseFrameText('a', 200, { big: 1n })).toThrow(TypeError)
  })
})
