import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { configError } from '../helpers/config-error.js'
import { loadConfig } from '../../src/config/config.js'
import { PRODUCTION_ENV } from '../helpers/production-env.js'
import { TEST_HASH_SPEC } from '../helpers/test-app.js'
import { hashPasswordSync } from '../../src/auth/password-hash.js'

const STRONG_ADMIN = JSON.stringify({ admin: { password_hash: hashPasswordSync('a-strong-password', TEST_HASH_SPEC), role: 'admin' } })


describe('configuration', () => {
  it('uses the contract defaults when nothing is set', () => {
    const config = loadConfig({})
    expect(config.port).toBe(8080)
    expect(config.host).toBe('0.0.0.0')
    expect(config.database).toEqual({ kind: 'sqlite', path: path.join('./data', 'fleetgate.db') })
    expect(config.jwtExpireHours).toBe(72)
    expect(config.deviceRequestTimeoutMs).toBe(10_000)
    expect(config.deviceAliveSeconds).toBe(60)
    expect(config.platformOfflineSeconds).toBe(60)
    expect(config.platformAutoRegister).toBe(false)
    expect(config.commandAckTimeoutSeconds).toBe(60)
    expect(config.commandMaxAttempts).toBe(5)
    expect(config.commandTtlSeconds).toBe(86_400)
    expect(config.firmwareMaxBytes).toBe(16_777_216)
    expect(config.wechat).toBeUndefined()
    expect(config.wechatApiBase).toBe('https://api.weixin.qq.com')
    expect(config.authUsers.admin).toMatchObject({ role: 'admin', plainTextPassword: false })
    expect(config.authUsers.admin?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(config.defaultAdminInUse).toBe(true)
  })

  it('reads users from CLOUD_AUTH_USERS and keeps the built-in admin unless redefined', () => {
    const config = loadConfig({ CLOUD_AUTH_USERS: JSON.stringify({ op: { password: 'pw', role: 'user', display_name: 'Op' } }) })
    expect(config.authUsers.op).toMatchObject({ role: 'user', display_name: 'Op', plainTextPassword: true })
    expect(config.authUsers.op?.passwordHash).toMatch(/^\$argon2id\$/)
    expect(config.authUsers.admin?.role).toBe('admin')
    const redefined = loadConfig({ CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 's3cret', role: 'admin', display_name: 'A' } }) })
    expect(redefined.defaultAdminInUse).toBe(false)
  })

  it.each([
    [{ CLOUD_AUTH_USERS: '{not json' }, 'CLOUD_AUTH_USERS'],
    [{ CLOUD_AUTH_USERS: '[1,2]' }, 'CLOUD_AUTH_USERS'],
    [{ CLOUD_AUTH_USERS: JSON.stringify({ x: { password: 'p', role: 'root' } }) }, 'CLOUD_AUTH_USERS'],
    [{ CLOUD_AUTH_USERS: JSON.stringify({ x: { role: 'user' } }) }, 'CLOUD_AUTH_USERS'],
    [{ CLOUD_JWT_EXPIRE_HOURS: 'three' }, 'CLOUD_JWT_EXPIRE_HOURS'],
    [{ CLOUD_JWT_EXPIRE_HOURS: '0' }, 'CLOUD_JWT_EXPIRE_HOURS'],
    [{ PORT: '99999' }, 'PORT'],
    [{ DEVICE_REQUEST_TIMEOUT_MS: '-5' }, 'DEVICE_REQUEST_TIMEOUT_MS'],
    [{ PLATFORM_AUTO_REGISTER: 'maybe' }, 'PLATFORM_AUTO_REGISTER'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ FIRMWARE_ROOT_PUBKEY: '/no/such/key.pem' }, 'FIRMWARE_ROOT_PUBKEY'],
    [{ FIRMWARE_ROOT_PUBKEY: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----' }, 'FIRMWARE_ROOT_PUBKEY'],
    [{ NODE_ENV: 'production' }, 'CLOUD_AUTH_USERS'],
    [{ NODE_ENV: 'production', CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'admin', role: 'admin' } }) }, 'CLOUD_AUTH_USERS'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, PLATFORM_REQUIRE_DEVICE_TOKEN: 'false' }, 'PLATFORM_REQUIRE_DEVICE_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, PLATFORM_REQUIRE_DEVICE_TOKEN: '' }, 'PLATFORM_REQUIRE_DEVICE_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, DEVICE_ENROLL_TOKEN: undefined }, 'DEVICE_ENROLL_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, DEVICE_ENROLL_TOKEN: '' }, 'DEVICE_ENROLL_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, CLOUD_JWT_SECRET: 'x'.repeat(31) }, 'CLOUD_JWT_SECRET'],
    // 16 characters, 48 bytes: the secret is measured in bytes (accepted; the short console token is refused).
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, CLOUD_JWT_SECRET: '密'.repeat(16), PLATFORM_CONSOLE_TOKEN: 'c'.repeat(31) }, 'PLATFORM_CONSOLE_TOKEN'],
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, PLATFORM_CONSOLE_TOKEN: 'c'.repeat(31) }, 'PLATFORM_CONSOLE_TOKEN'],
    // 16 characters, 48 bytes: the console token is measured in characters.
    [{ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, PLATFORM_CONSOLE_TOKEN: '密'.repeat(16) }, 'PLATFORM_CONSOLE_TOKEN'],
  ])('refuses %j naming %s', (env, variable) => {
    const err = configError(env as Record<string, string>)
    expect(err.variable).toBe(variable)
    expect(err.message.startsWith(variable)).toBe(true)
    expect(err.message).not.toContain('\n')
  })

  it('starts in production with device tokens, an enroll token and long enough secrets (or none: generated)', () => {
    expect(loadConfig({ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN }).production).toBe(true)
    const config = loadConfig({ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: STRONG_ADMIN, CLOUD_JWT_SECRET: 'x'.repeat(32), PLATFORM_CONSOLE_TOKEN: 'c'.repeat(32) })
    expect(config.jwtSecret).toHaveLength(32)
    expect(config.platformConsoleToken).toHaveLength(32)
    // Outside production the same short values are fine.
    expect(loadConfig({ CLOUD_JWT_SECRET: 'x'.repeat(16), PLATFORM_CONSOLE_TOKEN: 'c'.repeat(8) }).production).toBe(false)
  })

  it('accepts a P-256 root key as PEM text or as a path, and refuses another curve', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
    expect(loadConfig({ FIRMWARE_ROOT_PUBKEY: pem }).firmwareRootPublicKey?.asymmetricKeyType).toBe('ec')
    const dir = mkdtempSync(path.join(tmpdir(), 'fg-key-'))
    writeFileSync(path.join(dir, 'root.pub.pem'), pem)
    expect(loadConfig({ FIRMWARE_ROOT_PUBKEY: path.join(dir, 'root.pub.pem') }).firmwareRootPublicKey).toBeDefined()
    const other = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }).toString()
    expect(configError({ FIRMWARE_ROOT_PUBKEY: other }).variable).toBe('FIRMWARE_ROOT_PUBKEY')
  })

  it('parses DATABASE_URL forms', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({ kind: 'sqlite-memory' })
    expect(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db' }).database).toEqual({ kind: 'sqlite', path: '/tmp/x.db' })
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({ kind: 'postgres', url: 'postgres://u@h:5432/db' })
    expect(loadConfig({ DATA_DIR: '/var/fg' }).database).toEqual({ kind: 'sqlite', path: '/var/fg/fleetgate.db' })
  })

  it('enables mini-program login only with both credentials', () => {
    expect(loadConfig({ WECHAT_APPID: 'a' }).wechat).toBeUndefined()
    expect(loadConfig({ WECHAT_APPID: 'a', WECHAT_SECRET: 's', WECHAT_API_BASE: 'http://127.0.0.1:9/' }).wechat).toEqual({
      appid: 'a',
      secret: 's',
      apiBase: 'http://127.0.0.1:9',
    })
  })
})
