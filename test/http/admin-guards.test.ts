import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateFirmwareKeys, publicKeyPem } from '../../src/firmware/firmware-keys.js'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

const ADMIN_PREFIXES = ['/api/admin/', '/api/v1/admin/']

/** Sends only the head of a request and resolves with the status line of the answer. */
function headOnly(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head))
    let text = ''
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1')
      if (text.includes('\r\n')) {
        socket.destroy()
        resolve(text.split('\r\n')[0]!)
      }
    })
    socket.on('error', reject)
  })
}

describe.each(DIALECTS)('admin surfaces are guarded before the body on %s', (dialect) => {
  let t: TestApp
  let alice: string

  beforeAll(async () => {
    t = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: publicKeyPem(generateFirmwareKeys().root.publicKey) })
    alice = await loginAs(t.app, 'alice')
  })
  afterAll(() => t.close())

  it('answers every admin path of /openapi.json with 401 without credentials and 403 for a non-admin token', async () => {
    const doc = (await t.app.inject('/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> }
    let checked = 0
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!ADMIN_PREFIXES.some((prefix) => path.startsWith(prefix))) continue
      const url = path.replace(/\{[a-z_]+\}/g, 'x1')
      for (const method of Object.keys(operations)) {
        // A body of the wrong shape: credentials are checked before the body is looked at.
        const send = (headers: Record<string, string>) =>
          t.app.inject({ method: method.toUpperCase() as 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: method === 'get' || method === 'delete' ? undefined : '{"x":' })
        const anonymous = await send({})
        expect(anonymous.statusCode, `${method} ${path} anonymous`).toBe(401)
        expect(anonymous.json()).toMatchObject({ success: false, error: 'unauthorized' })
        const user = await send({ authorization: alice })
        expect(user.statusCode, `${method} ${path} as a user`).toBe(403)
        expect(user.json()).toMatchObject({ success: false, error: 'forbidden' })
        checked++
      }
    }
    expect(checked).toBeGreaterThan(20)
  })

  it('refuses an anonymous 15 MiB firmware upload with 401 before reading its body', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const head =
      'POST /api/v1/admin/firmware/slave/releases HTTP/1.1\r\nHost: x\r\n' +
      `Content-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: ${15 * 1024 * 1024}\r\n\r\n`
    // Not one byte of the body is sent: an answer can only come from a check made before reading it.
    expect(await headOnly(port, head)).toBe('HTTP/1.1 401 Unauthorized')
  })
})
