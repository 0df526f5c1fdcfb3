import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError, ERROR_CODES, ERROR_STATUS } from '../../src/errors.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/** Contract §2, copied: the codes and their statuses. The table must be exactly these. */
const CONTRACT_CODES = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  invalid_firmware: 422,
  unsupported_media_type: 415,
  rate_limited: 429,
  device_unavailable: 502,
  bad_device_response: 502,
  upstream_unavailable: 502,
  not_configured: 503,
  server_busy: 503,
  service_unavailable: 503,
  device_timeout: 504,
  internal: 500,
  range_not_satisfiable: 416,
}
const CONTRACT_NAMED_ELSEWHERE = ['device_error', 'device_auth_failed', 'invalid_code', 'invalid_selector', 'unknown_device']

/** The README's "Errors" table: code → status. */
function readmeErrorTable(): Map<string, number> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const section = readme.split(/^## Errors$/m)[1]?.split(/^## /m)[0] ?? ''
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)]
  return new Map(rows.map((row) => [row[1]!, Number(row[2])]))
}

describe('the error table', () => {
  it('holds exactly the contract §2 codes with their statuses', () => {
    expect([...ERROR_CODES].sort()).toEqual([...Object.keys(CONTRACT_CODES), ...CONTRACT_NAMED_ELSEWHERE].sort())
    for (const [code, status] of Object.entries(CONTRACT_CODES)) expect([code, ERROR_STATUS[code as keyof typeof ERROR_STATUS]]).toEqual([code, status])
  })

  it('is documented code by code, with the same status, in the README', () => {
    expect(Object.fromEntries(readmeErrorTable())).toEqual(ERROR_STATUS)
  })

  it('keeps a code and its status fixed at construction; a passed-through status is a constructor argument', () => {
    const passed = new AppError('device_error', 'no such order', {}, 404)
    expect([passed.code, passed.statusCode]).toEqual(['device_error', 404])
    expect(new AppError('server_busy', 'full').statusCode).toBe(503)
  })
})

describe('the OpenAPI document', () => {
  let t: TestApp
  let doc: {
    components: { schemas: Record<string, { properties: { error: { enum: string[] } } }> }
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }>>
  }
  beforeAll(async () => {
    t = await startTestApp('sqlite')
    doc = (await t.app.inject('/openapi.json')).json()
  })
  afterAll(() => t.close())

  it('enumerates every error code in its error schema', () => {
    expect([...doc.components.schemas.Error!.properties.error.enum].sort()).toEqual([...ERROR_CODES].sort())
  })

  it('gives every operation the error body as its default response', () => {
    const missing: string[] = []
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.responses.default?.content?.['application/json']?.schema.$ref !== '#/components/schemas/Error') missing.push(`${method} ${path}`)
      }
    }
    expect(missing).toEqual([])
    expect(Object.keys(doc.paths).length).toBeGreaterThan(20)
  })
})
