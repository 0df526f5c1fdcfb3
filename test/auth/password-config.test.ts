import { describe, expect, it } from 'vitest'
import { configError } from '../helpers/config-error.js'
import { warnAboutPlainPasswords } from '../../src/auth/plain-password-warning.js'
import { hashPasswordSync, parsePasswordHash, verifyPasswordSync, type PasswordHash } from '../../src/auth/password-hash.js'
import { UserDirectory } from '../../src/auth/user-directory.js'
import { loadConfig, type Config } from '../../src/config/config.js'
import type { Db } from '../../src/storage/storage.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startTestApp, TEST_HASH_SPEC } from '../helpers/test-app.js'
import { PRODUCTION_ENV } from '../helpers/production-env.js'

const cheap = (password: string) => hashPasswordSync(password, TEST_HASH_SPEC)
const users = (entries: Record<string, object>) => ({ CLOUD_AUTH_USERS: JSON.stringify(entries) })


describe('CLOUD_AUTH_USERS passwords', () => {
  it('accepts a password_hash and keeps it as given', () => {
    const phc = cheap('s3cret')
    const config = loadConfig(users({ ops: { password_hash: phc, role: 'user' } }))
    expect(config.authUsers.ops).toEqual({ passwordHash: phc, plainTextPassword: false, role: 'user', display_name: 'ops' })
  })

  it('hashes a plain-text password at start and keeps no trace of the text in the configuration', () => {
    const secret = 'plain-Text-Secret-4711'
    const config = loadConfig(users({ ops: { password: secret, role: 'user' }, admin: { password: 'Admin-Secret-0815', role: 'admin' } }))
    const dump = JSON.stringify(config)
    expect(dump).not.toContain(secret)
    expect(dump).not.toContain('Admin-Secret-0815')
    expect(config.authUsers.ops?.plainTextPassword).toBe(true)
    expect(Object.keys(config.authUsers.ops!).sort()).toEqual(['display_name', 'passwordHash', 'plainTextPassword', 'role'])
    expect(verifyPasswordSync(secret, parsePasswordHash(config.authUsers.ops!.passwordHash))).toBe(true)
    expect(Object.isFrozen(config.authUsers)).toBe(true)
    expect(Object.isFrozen(config.authUsers.ops)).toBe(true)
  })

  it('keeps no plain text for the built-in admin either: its hash verifies "admin"', () => {
    const config = loadConfig({})
    expect(JSON.stringify(config.authUsers)).not.toMatch(/"password"/)
    expect(verifyPasswordSync('admin', parsePasswordHash(config.authUsers.admin!.passwordHash))).toBe(true)
    expect(config.defaultAdminInUse).toBe(true)
  })

  it.each([
    ['both password and password_hash', { password: 'p', password_hash: cheap('p'), role: 'user' }, /user ops: give either password or password_hash, not both/],
    ['neither', { role: 'user' }, /user ops: needs password or password_hash/],
    ['a password_hash that is no string', { password_hash: 42, role: 'user' }, /user ops: password_hash must be a string/],
    ['a password_hash that is no PHC string', { password_hash: 'p', role: 'user' }, /user ops: password_hash is not a PHC string/],
    ['a scrypt hash with a 4-byte salt', { password_hash: '$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA', role: 'user' }, /user ops: password_hash salt must be 8–64 bytes/],
    ['an argon2id hash of another version', { password_hash: '$argon2id$v=16$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA', role: 'user' }, /user ops: password_hash argon2id version must be v=19/],
    ['an empty password', { password: '', role: 'user' }, /user ops: password must be a string of 1–128 characters/],
  ])('refuses %s with one line naming CLOUD_AUTH_USERS and the user', (_case, entry, message) => {
    const err = configError(users({ ops: entry }))
    expect(err.variable).toBe('CLOUD_AUTH_USERS')
    expect(err.message).toMatch(/^CLOUD_AUTH_USERS: /)
    expect(err.message).toMatch(message)
    expect(err.message).not.toContain('\n')
  })

  it('refuses, in production, an admin whose password_hash is a hash of "admin"', () => {
    const err = configError({ ...PRODUCTION_ENV, ...users({ admin: { password_hash: cheap('admin'), role: 'admin' } }) })
    expect(err.message).toMatch(/^CLOUD_AUTH_USERS: NODE_ENV=production refuses the default password/)
    expect(loadConfig({ ...PRODUCTION_ENV, ...users({ admin: { password_hash: cheap('other'), role: 'admin' } }) }).defaultAdminInUse).toBe(false)
  })
})

describe('the production warning about plain-text passwords', () => {
  const capture = () => {
    const lines: string[] = []
    return { lines, log: { warn: (message: string) => void lines.push(message) } }
  }

  it('names every user still configured with a plain-text password, once', () => {
    const config = loadConfig({
      ...PRODUCTION_ENV,
      ...users({ admin: { password_hash: cheap('root'), role: 'admin' }, carol: { password: 'c-pass', role: 'user' }, dave: { password: 'd-pass', role: 'user' } }),
    })
    const { lines, log } = capture()
    warnAboutPlainPasswords(config, log)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/plain-text password: carol, dave\b/)
    expect(lines[0]).not.toMatch(/admin/)
    expect(lines[0]).not.toContain('c-pass')
  })

  it('says nothing outside production or when every user has a hash', () => {
    const { lines, log } = capture()
    warnAboutPlainPasswords(loadConfig(users({ carol: { password: 'c-pass', role: 'user' } })), log)
    warnAboutPlainPasswords(loadConfig({ ...PRODUCTION_ENV, ...users({ admin: { password_hash: cheap('root'), role: 'admin' } }) }), log)
    expect(lines).toEqual([])
  })
})

describe('password checks at login', () => {
  function observedDirectory(authUsers: Config['authUsers']) {
    const checked: PasswordHash[] = []
    const directory = new UserDirectory(authUsers, {} as Db, async (_password, stored) => {
      checked.push(stored)
      return false
    })
    return { checked, directory }
  }

  it('checks an unknown user against a hash with the same parameters as a known one', async () => {
    const { authUsers } = loadConfig(users({ admin: { password_hash: cheap('root'), role: 'admin' }, carol: { password_hash: cheap('c'), role: 'user' } }))
    const { checked, directory } = observedDirectory(authUsers)
    expect(await directory.authenticate('nobody', 'x')).toBeNull()
    expect(await directory.authenticate('carol', 'x')).toBeNull()
    expect(checked).toHaveLength(2)
    expect(checked[0]!.params).toEqual(checked[1]!.params)
    expect(checked[0]!.salt.length).toBe(checked[1]!.salt.length)
    expect(checked[0]!.hash.length).toBe(checked[1]!.hash.length)
  })

  it('gives an unknown user the dearest parameters any configured user has', async () => {
    const { authUsers } = loadConfig(users({ carol: { password_hash: cheap('c'), role: 'user' } })) // plus the built-in admin (argon2id, m=19456)
    const { checked, directory } = observedDirectory(authUsers)
    await directory.authenticate('nobody', 'x')
    expect(checked[0]!.scheme).toBe('argon2id')
    expect(checked[0]!.params).toEqual({ m: 19456, t: 2, p: 1 })
  })

  it('never lets an unknown user in, whatever the password', async () => {
    const { authUsers } = loadConfig(users({ admin: { password_hash: cheap('root'), role: 'admin' } }))
    const directory = new UserDirectory(authUsers, {} as Db)
    expect(await directory.authenticate('nobody', '')).toBeNull()
    expect(await directory.authenticate('admin', 'root')).toMatchObject({ id: 'admin', role: 'admin' })
  })
})

describe.each(DIALECTS)('login with a password_hash on %s', (dialect) => {
  it('logs in with the password, and answers 401 to another', async () => {
    const t = await startTestApp(dialect, users({ ops: { password_hash: hashPasswordSync('ops-pass'), role: 'user', display_name: 'Ops' } }))
    try {
      const ok = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'ops', password: 'ops-pass' } })
      expect(ok.statusCode).toBe(200)
      expect(ok.json().user).toEqual({ id: 'ops', username: 'ops', display_name: 'Ops', role: 'user' })
      const wrong = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'ops', password: 'ops-pasS' } })
      expect(wrong.statusCode).toBe(401)
      expect(wrong.json()).toMatchObject({ success: false, error: 'unauthorized', message: 'Wrong username or password' })
    } finally {
      await t.close()
    }
  })
})
