import { describe, expect, it } from 'vitest'
import { deviceLinkUrl, ok, RouteError, RouteTable } from '@fleetgate/device-agent'

const user = { id: 'u', username: 'u', role: 'user' }
const call = (routes: RouteTable, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body: unknown = null) =>
  routes.dispatch({ method, path, query: {}, body, user })

describe('route table', () => {
  it('passes path parameters, decoded, and prefers literal segments over parameters', async () => {
    const routes = new RouteTable()
      .get('/orders/:oid', ({ params }) => ok({ oid: params.oid }))
      .get('/orders/recent', () => ok({ recent: true }))
    expect(await call(routes, 'GET', '/orders/ord%3A1')).toEqual({ status: 200, data: { oid: 'ord:1' } })
    expect(await call(routes, 'GET', '/orders/recent')).toEqual({ status: 200, data: { recent: true } })
  })

  it('answers 404 not_found for an unknown path and 405 for a known path with another method', async () => {
    const routes = new RouteTable().get('/a', () => ok({}))
    expect(await call(routes, 'GET', '/b')).toMatchObject({ status: 404, data: { error: 'not_found' } })
    expect(await call(routes, 'DELETE', '/a')).toMatchObject({ status: 405, data: { allowed: ['GET'] } })
  })

  it('turns a thrown RouteError into its status and any other throw into 500', async () => {
    const routes = new RouteTable()
      .post('/bad', () => {
        throw new RouteError(400, 'out_of_range', 'x too far', { axis: 'x' })
      })
      .post('/boom', async () => {
        throw new Error('motor driver fault')
      })
      .post('/nothing', () => undefined as never)
    expect(await call(routes, 'POST', '/bad')).toEqual({ status: 400, data: { error: 'out_of_range', message: 'x too far', axis: 'x' } })
    expect(await call(routes, 'POST', '/boom')).toEqual({ status: 500, data: { error: 'internal', message: 'motor driver fault' } })
    expect((await call(routes, 'POST', '/nothing')).status).toBe(500)
  })

  it('finds a literal route by any spelling of its path, and a parameter route for another method on it', async () => {
    const routes = new RouteTable()
      .get('/hardware/position', () => ok({ at: 'literal' }))
      .post('/hardware/:part', ({ params }) => ok({ part: params.part }))
      .get('/a%20b', () => ok({ at: 'escaped pattern' }))
    for (const path of ['/hardware/position', '/hardware/position/', '//hardware/position', '/hardware/%70osition', '/hardware/position?x=1']) {
      expect(await call(routes, 'GET', path)).toEqual({ status: 200, data: { at: 'literal' } })
    }
    expect(await call(routes, 'POST', '/hardware/position')).toEqual({ status: 200, data: { part: 'position' } })
    expect(await call(routes, 'PUT', '/hardware/position')).toMatchObject({ status: 405, data: { allowed: ['GET', 'POST'] } })
    // Request segments are compared decoded, so a pattern written with an escape matches nothing, by either way.
    expect(await call(routes, 'GET', '/a%20b')).toMatchObject({ status: 404 })
    expect(await call(routes, 'GET', '/a b')).toMatchObject({ status: 404 })
  })

  it('refuses to define the same method and pattern twice', () => {
    const routes = new RouteTable().get('/a/:x', () => ok({}))
    expect(() => routes.get('/a/:x', () => ok({}))).toThrow(/already defined/)
  })
})

describe('device link URL', () => {
  it('maps http(s) to ws(s) and appends the link path once', () => {
    expect(deviceLinkUrl('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/api/v1/device-link')
    expect(deviceLinkUrl('https://gw.example.com/fleet/')).toBe('wss://gw.example.com/fleet/api/v1/device-link')
    expect(deviceLinkUrl('wss://gw.example.com/api/v1/device-link')).toBe('wss://gw.example.com/api/v1/device-link')
    expect(() => deviceLinkUrl('ftp://gw')).toThrow(/scheme/)
  })
})
