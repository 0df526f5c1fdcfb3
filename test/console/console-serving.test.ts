import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_CSP } from '../../src/console/security-headers.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const PAGE = '<!doctype html><title>fleetgate</title><div id="root"></div>'
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }

describe('console serving', () => {
  let dir: string
  let t: TestApp
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'console-'))
    mkdirSync(path.join(dir, 'assets'))
    writeFileSync(path.join(dir, 'index.html'), PAGE)
    writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)')
    t = await startTestApp('sqlite', {}, { consoleDir: dir })
  })
  afterAll(async () => {
    await t.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers GET / with the page, not cached', async () => {
    const res = await t.app.inject({ url: '/', headers: HTML })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(res.body).toBe(PAGE)
  })

  it('answers a client route a browser reloads with the page', async () => {
    for (const url of ['/machines', '/machines/pnp-01', '/platform/devices/iot-1?x=1', '/login']) {
      const res = await t.app.inject({ url, headers: HTML })
      expect(res.statusCode, url).toBe(200)
      expect(res.body).toBe(PAGE)
    }
  })

  it('sends the security headers with the page and the assets, HSTS only over HTTPS', async () => {
    for (const url of ['/', '/machines/pnp-01', '/assets/index-AbC123.js']) {
      const res = await t.app.inject({ url, headers: HTML })
      expect(res.statusCode, url).toBe(200)
      expect(res.headers['content-security-policy'], url).toBe(CONSOLE_CSP)
      expect(res.headers['content-security-policy'], url).toMatch(/(^|; )default-src 'self'(;|$)/)
      expect(res.headers['content-security-policy'], url).toMatch(/(^|; )frame-ancestors 'none'(;|$)/)
      expect(res.headers['x-frame-options'], url).toBe('DENY')
      expect(res.headers['x-content-type-options'], url).toBe('nosniff')
      expect(res.headers['referrer-policy'], url).toBe('no-referrer')
      expect(res.headers['strict-transport-security'], url).toBeUndefined()
    }
    // X-Forwarded-Proto from a peer that is not a trusted balancer is ignored.
    const forged = await t.app.inject({ url: '/', headers: { ...HTML, 'x-forwarded-proto': 'https' } })
    expect(forged.headers['strict-transport-security']).toBeUndefined()
  })

  it('sends Strict-Transport-Security when a trusted balancer says the request came over HTTPS', async () => {
    const behind = await startTestApp('sqlite', { TRUST_PROXY: '127.0.0.1' }, { consoleDir: dir })
    try {
      for (const url of ['/', '/assets/index-AbC123.js']) {
        const https = await behind.app.inject({ url, remoteAddress: '127.0.0.1', headers: { ...HTML, 'x-forwarded-proto': 'https' } })
        expect(https.headers['strict-transport-security'], url).toBe('max-age=31536000')
        const http = await behind.app.inject({ url, remoteAddress: '127.0.0.1', headers: { ...HTML, 'x-forwarded-proto': 'http' } })
        expect(http.headers['strict-transport-security'], url).toBeUndefined()
      }
    } finally {
      await behind.close()
    }
  })

  it('sends no console headers with the API', async () => {
    const res = await t.app.inject({ url: '/healthz' })
    expect(res.headers['content-security-policy']).toBeUndefined()
  })

  it('serves hashed assets as immutable', async () => {
    const res = await t.app.inject({ url: '/assets/index-AbC123.js' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(res.headers['content-type']).toMatch(/javascript/)
    expect(res.body).toBe('console.log(1)')
  })

  it('answers a missing asset with a JSON 404, never the page', async () => {
    const res = await t.app.inject({ url: '/assets/gone-123.js', headers: HTML })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ success: false, error: 'not_found' })
  })

  it('keeps JSON 404s for unknown API, platform and ops paths even when a browser asks', async () => {
    for (const url of ['/api/v1/nope', '/api/admin/nope', '/api', '/v1/nope', '/svc/nope', '/metricsx', '/healthz/x']) {
      const res = await t.app.inject({ url, headers: HTML })
      expect(res.statusCode, url).toBe(404)
      expect(res.headers['content-type'], url).toMatch(/application\/json/)
      expect(res.json(), url).toMatchObject({ success: false, error: 'not_found' })
    }
  })

  it('keeps the API answering JSON', async () => {
    const health = await t.app.inject({ url: '/healthz', headers: HTML })
    expect(health.json()).toMatchObject({ status: 'ok' })
    const devices = await t.app.inject({ url: '/api/v1/devices', headers: HTML })
    expect(devices.statusCode).toBe(401)
    expect(devices.json()).toMatchObject({ error: 'unauthorized' })
  })

  it('answers a non-browser GET of an unknown path with JSON 404', async () => {
    const res = await t.app.inject({ url: '/nothing-here', headers: { accept: 'application/json' } })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ error: 'not_found' })
  })

  it('keeps the page out of OpenAPI', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json()
    expect(Object.keys(doc.paths)).not.toContain('/*')
  })
})

describe('console serving without a build', () => {
  it('still starts, and a browser gets a JSON 404 saying how to build', async () => {
    const t = await startTestApp('sqlite', {}, { consoleDir: path.join(tmpdir(), 'no-console-here') })
    try {
      const res = await t.app.inject({ url: '/', headers: HTML })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ error: 'not_found', message: expect.stringContaining('npm run build') })
      expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200)
    } finally {
      await t.close()
    }
  })
})
