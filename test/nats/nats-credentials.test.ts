import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { nkeys } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findNatsServer, startNatsServer, type NatsServer } from '../../src/cluster/nats-server.js'
import { ConfigError } from '../../src/config/config-error.js'
import { NatsRpc } from '../../src/link/bus/nats-rpc.js'
import { BusSigner, signedConnection } from '../../src/nats/bus-signature.js'
import { connectNats, parseNatsUrl, probeNats } from '../../src/nats/connect-nats.js'

const withCredentials = (url: string, credentials: string) => url.replace('nats://', `nats://${credentials}@`)

describe('NATS_URL parsing', () => {
  it('takes the user and password, or the token, out of the server addresses (the client ignores them)', () => {
    expect(parseNatsUrl('nats://fg:s%40cret@10.0.0.1:4223, nats://fg:s%40cret@10.0.0.2')).toEqual({ servers: ['10.0.0.1:4223', '10.0.0.2:4222'], auth: { user: 'fg', pass: 's@cret' }, tls: false })
    expect(parseNatsUrl('nats://t0ken@nats.internal:4222')).toEqual({ servers: ['nats.internal:4222'], auth: { token: 't0ken' }, tls: false })
    expect(parseNatsUrl('tls://nats.internal')).toMatchObject({ servers: ['nats.internal:4222'], tls: true })
    expect(parseNatsUrl('127.0.0.1:4222')).toMatchObject({ servers: ['127.0.0.1:4222'], auth: {} })
  })

  it('refuses an unknown scheme naming NATS_URL, without repeating the credentials', () => {
    const err = (() => {
      try {
        parseNatsUrl('http://fg:secret@host:4222')
      } catch (e) {
        return e as ConfigError
      }
      return undefined
    })()
    expect(err).toBeInstanceOf(ConfigError)
    expect(err!.variable).toBe('NATS_URL')
    expect(err!.message).not.toContain('secret')
  })
})

describe.skipIf(!findNatsServer())('NATS with credentials', () => {
  let withPassword: NatsServer
  let withToken: NatsServer
  let withNkey: NatsServer
  const seed = nkeys.createUser()
  const dir = mkdtempSync(path.join(tmpdir(), 'fg-nats-creds-'))
  const seedFile = path.join(dir, 'user.nk')
  beforeAll(async () => {
    writeFileSync(seedFile, `${new TextDecoder().decode(seed.getSeed())}\n`, { mode: 0o600 })
    const conf = path.join(dir, 'nats-server.conf')
    writeFileSync(conf, `authorization { users = [ { nkey: ${seed.getPublicKey()} } ] }\n`)
    ;[withPassword, withToken, withNkey] = await Promise.all([
      startNatsServer({ args: ['--user', 'fleetgate', '--pass', 's3cret'] }),
      startNatsServer({ args: ['--auth', 't0ken-of-the-cluster'] }),
      startNatsServer({ args: ['-c', conf] }),
    ])
  })
  afterAll(async () => {
    await Promise.all([withPassword?.destroy(), withToken?.destroy(), withNkey?.destroy()])
  })

  const refusal = async (attempt: Promise<unknown>) => {
    const err = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }

  it('connects with the user and password of NATS_URL, and is refused without them or with a wrong one, naming NATS_URL', async () => {
    const nc = await connectNats(withCredentials(withPassword.url, 'fleetgate:s3cret'), 'test')
    await nc.flush()
    await nc.close()
    await probeNats(withCredentials(withPassword.url, 'fleetgate:s3cret'))
    const without = await refusal(connectNats(withPassword.url, 'test'))
    expect(without.variable).toBe('NATS_URL')
    expect(without.message).toMatch(/authorization/i)
    expect(without.message).toMatch(/NATS_URL names none/)
    const wrong = await refusal(probeNats(withCredentials(withPassword.url, 'fleetgate:wrong')))
    expect(wrong.variable).toBe('NATS_URL')
    expect(wrong.message).toMatch(/credentials in NATS_URL/)
    expect(wrong.message).not.toContain('wrong')
  })

  it('connects with the token of NATS_URL, and is refused without it', async () => {
    const nc = await connectNats(withCredentials(withToken.url, 't0ken-of-the-cluster'), 'test')
    await nc.close()
    expect((await refusal(connectNats(withToken.url, 'test'))).variable).toBe('NATS_URL')
  })

  it('connects with the nkey seed file of NATS_CREDS, and is refused without it', async () => {
    const nc = await connectNats({ url: withNkey.url, creds: seedFile }, 'test')
    await nc.close()
    expect((await refusal(connectNats(withNkey.url, 'test'))).variable).toBe('NATS_URL')
    const missing = await refusal(connectNats({ url: withNkey.url, creds: path.join(dir, 'absent.creds') }, 'test'))
    expect(missing.variable).toBe('NATS_CREDS')
  })

  it('lets fleetgate in with the example deploy/nats/nats-server.conf: its user, its subjects and inboxes, signed', async () => {
    const conf = new URL('../../deploy/nats/nats-server.conf', import.meta.url).pathname
    const server = await startNatsServer({ args: ['-c', conf, '-m', '0'] })
    try {
      const url = withCredentials(server.url, 'fleetgate:change-me-to-a-long-random-password')
      const signer = new BusSigner('k'.repeat(32))
      const [one, two] = await Promise.all([connectNats(url, 'a'), connectNats(url, 'b')])
      const a = new NatsRpc(signedConnection(one, signer))
      const b = new NatsRpc(signedConnection(two, signer))
      b.serve('fleetgate.device.x.request', async (value) => ({ echo: value }), () => undefined)
      await two.flush()
      await expect(a.request('fleetgate.device.x.request', { n: 1 }, 2000)).resolves.toEqual({ echo: { n: 1 } })
      await Promise.all([one.close(), two.close()])
      expect((await refusal(probeNats(server.url))).variable).toBe('NATS_URL')
    } finally {
      await server.destroy()
    }
  })
})

const openssl = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((p) => existsSync(p))

describe.skipIf(!findNatsServer() || !openssl)('NATS over TLS with a private CA', () => {
  let server: NatsServer
  const dir = mkdtempSync(path.join(tmpdir(), 'fg-nats-tls-'))
  const file = (name: string) => path.join(dir, name)
  beforeAll(async () => {
    const run = (...args: string[]) => execFileSync(openssl!, args, { stdio: 'ignore' })
    run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=fleetgate test CA', '-keyout', file('ca-key.pem'), '-out', file('ca.pem'))
    run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('server-key.pem'), '-out', file('server.csr'))
    writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    run('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca-key.pem'), '-CAcreateserial', '-days', '1', '-extfile', file('san.ext'), '-out', file('server.pem'))
    server = await startNatsServer({ args: ['--tls', '--tlscert', file('server.pem'), '--tlskey', file('server-key.pem'), '--user', 'fleetgate', '--pass', 's3cret'] })
  })
  afterAll(async () => {
    await server?.destroy()
  })

  it('connects with tls:// and NATS_TLS_CA, and is refused without the CA, naming NATS_URL', async () => {
    const url = withCredentials(server.url, 'fleetgate:s3cret').replace('nats://', 'tls://')
    const nc = await connectNats({ url, tlsCa: file('ca.pem') }, 'test')
    await nc.flush()
    await nc.close()
    const refused = await refusalOf(connectNats(url, 'test'))
    expect(refused.variable).toBe('NATS_URL')
    expect(refused.message).toMatch(/NATS_TLS_CA/)
  })
})

async function refusalOf(attempt: Promise<unknown>): Promise<ConfigError> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ConfigError)
  return err as ConfigError
}
