import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

const PLATFORM_ENDPOINTS = [
  ['post', '/v1/device/heartbeat'],
  ['get', '/v1/device/{device_id}'],
  ['post', '/v1/device/{device_id}/telemetry'],
  ['post', '/v1/device/{device_id}/telemetry/batch'],
  ['get', '/v1/device/{device_id}/commands'],
  ['post', '/v1/device/{device_id}/commands/ack'],
  ['get', '/v1/device/{device_id}/config'],
  ['post', '/v1/device/{device_id}/config'],
  ['post', '/v1/device/{device_id}/logs'],
  ['post', '/v1/device/{device_id}/logs/batch'],
  ['get', '/v1/time'],
  ['post', '/v1/device/{device_id}/time/sync'],
  ['get', '/svc/upgrade/check'],
  ['get', '/v1/ota/check'],
  ['get', '/v1/device/{device_id}/bind/code'],
  ['get', '/v1/device/{device_id}/bind/status'],
  ['post', '/v1/bind/verify'],
  ['get', '/api/admin/meta'],
  ['get', '/api/admin/summary'],
  ['get', '/api/admin/devices'],
  ['get', '/api/admin/device/{device_id}/detail'],
  ['post', '/api/admin/device/add'],
  ['post', '/api/admin/device/{device_id}/delete'],
  ['post', '/api/admin/device/{device_id}/command'],
  ['post', '/api/admin/device/{device_id}/expression'],
  ['post', '/api/admin/device/{device_id}/hid'],
  ['get', '/api/admin/device/{device_id}/telemetry'],
  ['get', '/api/admin/logs'],
  ['post', '/api/admin/logs/clear'],
  ['get', '/api/admin/commands'],
  ['post', '/api/admin/commands/clear'],
] as const

describe('platform OpenAPI', () => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(DIALECTS[0]!)
  })
  afterAll(() => t.close())

  it('lists every platform endpoint with its schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    for (const [method, path] of PLATFORM_ENDPOINTS) {
      const operation = doc.paths[path]?.[method]
      expect(operation, `${method} ${path}`).toBeDefined()
      expect(operation.responses, `${method} ${path}`).toBeDefined()
    }
    const batch = doc.paths['/v1/device/{device_id}/logs/batch'].post.requestBody.content
    expect(Object.keys(batch).sort()).toEqual(['application/json', 'text/plain'])
    expect(doc.paths['/v1/device/{device_id}/telemetry/batch'].post.requestBody.content['application/json'].schema.properties.records).toBeDefined()
  })
})
