import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
