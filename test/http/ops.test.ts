import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import SwaggerParser from '@apidevtools/swagger-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/** Prometheus' own linter (Debian package prometheus): .ci/run installs it, and CI requires it. */
const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p))
if (!promtool && process.env.CI) throw new Error('promtool is required in CI (apt-get install prometheus; .ci/run does)')

describe.each(DIALECTS)('ops endpoints on %s', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(() => t.close())

  it('answers /healthz and /readyz without credentials', async () => {
    expect((await t.app.inject('/healthz')).statusCode).toBe(200)
    const ready = await t.app.inject('/readyz')
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toMatchObject({ success: true })
  })

  it('serves Prometheus text with request counts by route pattern', async () => {
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'admin' } })
    const res = await t.app.inject('/metrics')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/plain/)
    expect(res.body).toMatch(/fleetgate_http_requests_total\{method="POST",route="\/api\/v1\/auth\/login",status_code="200"\} \d+/)
    expect(res.body).toContain('# TYPE fleetgate_http_request_duration_seconds histogram')
  })

  it('counts requests that match no route under route="unmatched", never under their raw URL', async () => {
    // GET of any path is the console's (its catch-all route); no route takes a DELETE here.
    const path = `/no-such-route-${Date.now()}`
    expect((await t.app.inject({ method: 'DELETE', url: path })).statusCode).toBe(404)
    expect((await t.app.inject({ method: 'DELETE', url: path })).statusCode).toBe(404)
    const text = (await t.app.inject('/metrics')).body
    expect(text).not.toContain(path)
    const count = /fleetgate_http_requests_total\{method="DELETE",route="unmatched",status_code="404"\} (\d+)/.exec(text)
    expect(Number(count?.[1])).toBeGreaterThanOrEqual(2)
  })

  it('counts each route by its own pattern and status, with a duration per route', async () => {
    const before = (await t.app.inject('/metrics')).body
    const counted = (text: string) => Number(/fleetgate_http_requests_total\{method="GET",route="\/healthz",status_code="200"\} (\d+)/.exec(text)?.[1] ?? 0)
    for (let i = 0; i < 3; i++) await t.app.inject('/healthz')
    const after = (await t.app.inject('/metrics')).body
    expect(counted(after) - counted(before)).toBe(3)
    expect(after).toMatch(/fleetgate_http_request_duration_seconds_count\{method="GET",route="\/healthz"\} \d+/)
  })

  it('names metrics as Prometheus expects: only counters end in _total, every metric has HELP and TYPE', async () => {
    const text = (await t.app.inject('/metrics')).body
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }))
    expect(types.length).toBeGreaterThan(10)
    for (const { name, type } of types) {
      expect(name.endsWith('_total'), `${name} is a ${type}`).toBe(type === 'counter')
      expect(text).toContain(`# HELP ${name} `)
    }
    if (promtool) {
      const result = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' })
      expect(result.status, result.stdout + result.stderr).toBe(0)
    }
  })

  it('publishes an OpenAPI 3 document listing the auth endpoints with their bodies', async () => {
    const res = await t.app.inject('/openapi.json')
    expect(res.statusCode).toBe(200)
    const doc = res.json()
    expect(doc.openapi).toMatch(/^3\./)
    expect(doc.paths['/api/v1/auth/login'].post.requestBody.content['application/json'].schema.required).toEqual(['username', 'password'])
    expect(doc.paths['/api/v1/auth/wechat-login']).toBeDefined()
    expect(doc.paths['/healthz']).toBeDefined()
  })

  it('publishes an /openapi.json that a real OpenAPI validator accepts', async () => {
    const doc = (await t.app.inject('/openapi.json')).json()
    await expect(SwaggerParser.validate(doc)).resolves.toMatchObject({ openapi: doc.openapi })
  })

  it('renders /docs as an HTML page, possibly after a redirect', async () => {
    let res = await t.app.inject('/docs')
    if (res.statusCode >= 300 && res.statusCode < 400) res = await t.app.inject(res.headers.location as string)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/text\/html/)
    expect(res.body).toMatch(/swagger/i)
  })

  it('answers /readyz 503 once the database is gone', async () => {
    const other = await startTestApp(dialect)
    await other.storage.close()
    const res = await other.app.inject('/readyz')
    expect(res.statusCode).toBe(503)
    expect(res.json().success).toBe(false)
    await other.app.close().catch(() => {})
    await other.database.cleanup()
  })
})
