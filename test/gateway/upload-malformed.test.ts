import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateFirmwareKeys, publicKeyPem } from '../../src/firmware/firmware-keys.js'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

const keys = generateFirmwareKeys()
const URL = '/api/v1/admin/firmware/slave/releases'

/** A well-formed two-part form (image file + manifest field) with the given boundary. */
function form(boundary: string): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="system.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    randomBytes(4096),
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="manifest"\r\n\r\n{"release":"r-1"}\r\n--${boundary}--\r\n`),
  ])
}

const MALFORMED: { name: string; type: string; body: Buffer }[] = [
  { name: 'no boundary', type: 'multipart/form-data', body: form('XyZ123') },
  { name: 'a boundary that does not match', type: 'multipart/form-data; boundary=other-boundary', body: form('XyZ123') },
  { name: 'a truncated body', type: 'multipart/form-data; boundary=XyZ123', body: form('XyZ123').subarray(0, 2000) },
  { name: 'random bytes', type: 'multipart/form-data; boundary=XyZ123', body: randomBytes(8192) },
  { name: 'an empty body', type: 'multipart/form-data; boundary=XyZ123', body: Buffer.alloc(0) },
]

describe.each(DIALECTS)('malformed firmware uploads on %s', (dialect) => {
  let t: TestApp
  let admin: string

  beforeAll(async () => {
    t = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey) })
    admin = await loginAs(t.app, 'admin', 'admin')
  })
  afterAll(() => t.close())

  for (const { name, type, body } of MALFORMED) {
    it(`answers 400 with the error body to ${name}, storing nothing`, async () => {
      const res = await t.app.inject({ method: 'POST', url: URL, headers: { authorization: admin, 'content-type': type }, payload: body })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
      const list = await t.app.inject({ method: 'GET', url: URL, headers: { authorization: admin } })
      expect(list.json().releases).toEqual([])
    })
  }
})
