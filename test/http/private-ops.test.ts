import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPrivateAddress } from '../../src/http/private-ops.js'
import { configError } from '../helpers/config-error.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const OPS = ['/docs', '/docs/', '/openapi.json', '/metrics']

describe('OPS_ENDPOINTS', () => {
  let open: TestApp
  let closed: TestApp
  let behindBalancer: TestApp
  beforeAll(async () => {
    open = await startTestApp('sqlite')
    closed = await startTestApp('sqlite', { OPS_ENDPOINTS: 'private' })
    behindBalancer = await startTestApp('sqlite', { OPS_ENDPOINTS: 'private', TRUST_PROXY: '10.0.0.2' })
  })
  afterAll(async () => {
    await Promise.all([open, closed, behindBalancer].map((t) => t?.close()))
  })

  const get = (t: TestApp, url: string, remoteAddress: string, headers: Record<string, string> = {}) => t.app.inject({ url, remoteAddress, headers })
  const found = (status: number) => status === 200 || status === 302

  it('public (the default): serves /docs, /openapi.json and /metrics to anyone', async () => {
    for (const url of OPS) expect(found((await get(open, url, '203.0.113.9')).statusCode), url).toBe(true)
  })

  it('private: answers 404 to a public address, and serves loopback and private-range peers', async () => {
    for (const url of OPS) {
      const res = await get(closed, url, '203.0.113.9')
      expect(res.statusCode, url).toBe(404)
      expect(res.json(), url).toMatchObject({ success: false, error: 'not_found' })
      expect(res.body, url).not.toMatch(/fleetgate_|"openapi":|swagger/i)
    }
    for (const address of ['127.0.0.1', '::1', '10.1.2.3', '172.20.0.5', '192.168.1.20', '::ffff:192.168.1.20', 'fd00::5']) {
      for (const url of OPS) expect(found((await get(closed, url, address)).statusCode), `${url} from ${address}`).toBe(true)
    }
  })

  it('private: keeps health checks, the API and the console open to everyone', async () => {
    expect((await get(closed, '/healthz', '203.0.113.9')).statusCode).toBe(200)
    expect((await get(closed, '/readyz', '203.0.113.9')).statusCode).toBe(200)
    expect((await get(closed, '/api/v1/devices', '203.0.113.9')).statusCode).toBe(401)
  })

  it('private, behind a trusted balancer: judges the forwarded client, not the balancer', async () => {
    const via = (client: string) => get(behindBalancer, '/metrics', '10.0.0.2', { 'x-forwarded-for': client })
    expect((await via('203.0.113.9')).statusCode).toBe(404)
    expect((await via('10.0.0.7')).statusCode).toBe(200)
    // A forwarded address from an untrusted peer counts for nothing: the peer is judged.
    expect((await get(behindBalancer, '/metrics', '203.0.113.9', { 'x-forwarded-for': '10.0.0.7' })).statusCode).toBe(404)
  })

  it('refuses another value naming the variable', () => {
    expect(configError({ OPS_ENDPOINTS: 'secret' }).variable).toBe('OPS_ENDPOINTS')
  })

  it.each([
    ['127.0.0.1', true],
    ['10.0.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.0.1', true],
    ['169.254.1.1', true],
    ['8.8.8.8', false],
    ['::1', true],
    ['fe80::1', true],
    ['fd12::1', true],
    ['2001:db8::1', false],
    ['::ffff:8.8.8.8', false],
    ['not an address', false],
  ])('isPrivateAddress(%s) is %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected)
  })
})
