import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/cluster/local-cluster.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p))
if (!NATS_SERVER) {
  if (process.env.CI) throw new Error('nats-server is required in CI')
  console.warn('\n!!! nats-server binary not found: skipping the undecided-claim test !!!\n')
}

/** A NATS server of this test's own, so the test can stop it; resolves once it logs that it is ready. */
async function startNats(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const child = spawn(NATS_SERVER!, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes('Server is ready')) resolve()
    })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`nats-server exited with ${code} before it was ready:\n${log}`)))
  })
  return { url: `nats://127.0.0.1:${port}`, child }
}

describe.skipIf(!NATS_SERVER || !DIALECTS.includes('postgres'))('a link whose ownership cannot be decided', () => {
  let nats: { url: string; child: ChildProcess }
  let gw: GatewayApp
  beforeAll(async () => {
    nats = await startNats()
    gw = await startGatewayApp('postgres', { NATS_URL: nats.url })
  })
  afterAll(async () => {
    if (nats?.child.exitCode === null) nats.child.kill('SIGKILL')
    await gw?.close()
  })

  it('is closed with 1013 and not registered while NATS is down', async () => {
    const before = await RawDevice.link(gw.linkUrl, { device_id: uniqueDeviceId('undecided') })
    nats.child.kill('SIGKILL')
    await once(nats.child, 'exit')

    const id = uniqueDeviceId('undecided')
    const device = await RawDevice.open(gw.linkUrl)
    await expect(device.register({ device_id: id })).rejects.toThrow(/closed 1013/)
    expect(device.received.some((f) => f.type === 'registered')).toBe(false)
    const record = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}`, headers: { authorization: await gw.auth('root') } })
    expect(record.json().device).toMatchObject({ registered: false, connected: false })
    await before.close()
  })
})
