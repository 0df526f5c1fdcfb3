import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

type Schema = { type?: string | string[]; anyOf?: Schema[]; oneOf?: Schema[] }
type Operation = { requestBody?: { content?: Record<string, { schema?: Schema }> } }

const NOT_OBJECTS = ['null', '[]', '"x"', '5', 'true']
/** Contract §7: the telemetry batch is `{records}` or a bare array (documented as the object). */
const ALSO_ARRAY = new Set(['/v1/device/{device_id}/telemetry/batch'])
const CONSOLE = { 'x-console-token': 'test-console-token' }

const allowsArray = (schema: Schema | undefined): boolean =>
  !!schema && ([schema.type].flat().includes('array') || [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(allowsArray))

describe.each(DIALECTS)('object bodies refuse null, arrays and scalars on %s', (dialect) => {
  let t: TestApp
  let admin: string

  beforeAll(async () => {
    // Mini-program login configured (never reached) so its body is validated rather than refused with 503.
    t = await startTestApp(dialect, { WECHAT_APPID: 'app', WECHAT_SECRET: 'secret', WECHAT_API_BASE: 'http://127.0.0.1:9' })
    admin = await loginAs(t.app, 'admin', 'admin')
    const add = await t.app.inject({ method: 'POST', url: '/api/admin/device/add', headers: CONSOLE, payload: { device_id: 'dev-1', model: 'm' } })
    expect(add.statusCode).toBe(201)
  })
  afterAll(() => t.close())

  it('answers 400 with the error body on every endpoint of /openapi.json that takes a JSON body', async () => {
    const doc = (await t.app.inject('/openapi.json')).json() as { paths: Record<string, Record<string, Operation>> }
    let checked = 0
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation.requestBody?.content?.['application/json']?.schema
        if (!schema) continue
        const url = path.replace(/\{cam\}/g, 'up').replace(/\{[a-z_]+\}/g, (m) => (m === '{device_id}' ? 'dev-1' : 'x1'))
        for (const payload of NOT_OBJECTS) {
          if (payload === '[]' && (allowsArray(schema) || ALSO_ARRAY.has(path))) continue
          const res = await t.app.inject({
            method: method.toUpperCase() as 'POST',
            url,
            headers: { authorization: admin, ...CONSOLE, 'content-type': 'application/json' },
            payload,
          })
          const where = `${method.toUpperCase()} ${path} ${payload} → ${res.statusCode} ${res.body.slice(0, 160)}`
          expect(res.statusCode, where).toBe(400)
          expect(res.json(), where).toMatchObject({ success: false, error: 'bad_request' })
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(100)
  })

  it('a null body to logs/clear or commands/clear deletes nothing', async () => {
    const device = { 'content-type': 'application/json' }
    expect((await t.app.inject({ method: 'POST', url: '/v1/device/dev-1/logs', headers: device, payload: { message: 'keep me' } })).statusCode).toBe(200)
    const command = await t.app.inject({ method: 'POST', url: '/api/admin/device/dev-1/command', headers: CONSOLE, payload: { action: 'reboot', params: {} } })
    expect(command.statusCode, command.body).toBe(201)

    for (const url of ['/api/admin/logs/clear', '/api/admin/commands/clear']) {
      const res = await t.app.inject({ method: 'POST', url, headers: { ...CONSOLE, 'content-type': 'application/json' }, payload: 'null' })
      expect(res.statusCode, url).toBe(400)
    }
    const logs = (await t.app.inject({ method: 'GET', url: '/api/admin/logs?source=device&device_id=dev-1', headers: CONSOLE })).json()
    expect(logs.logs.map((l: { message: string }) => l.message)).toContain('keep me')
    const commands = (await t.app.inject({ method: 'GET', url: '/api/admin/commands?device_id=dev-1', headers: CONSOLE })).json()
    expect(commands.commands).toHaveLength(1)
  })
})
