import { describe, expect, it } from 'vitest'
import {
  DEFAULT_HASH_SPEC,
  formatPasswordHash,
  hashPassword,
  hashPasswordSync,
  parsePasswordHash,
  PasswordHashError,
  verifyPassword,
  verifyPasswordSync,
} from '../../src/auth/password-hash.js'

const CHEAP = { scheme: 'scrypt', params: { ln: 4, r: 8, p: 1 } } as const
const SALT = 'c2FsdHNhbHRzYWx0c2FsdA' // 16 bytes
const HASH = 'aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g' // 32 bytes

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

describe('password hashes (PHC strings)', () => {
  it('hashes with argon2id at OWASP parameters and a fresh 16-byte salt, and verifies the right password only', async () => {
    const phc = await hashPassword('correct horse')
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    const stored = parsePasswordHash(phc)
    expect(stored.scheme).toBe('argon2id')
    expect(stored.params).toEqual(DEFAULT_HASH_SPEC.params)
    expect(stored.salt).toHaveLength(16)
    expect(await verifyPassword('correct horse', stored)).toBe(true)
    expect(await verifyPassword('correct horsf', stored)).toBe(false)
    expect(await verifyPassword('', stored)).toBe(false)
    expect(await hashPassword('correct horse')).not.toBe(phc)
  })

  it('verifies synchronously and asynchronously alike, with the parameters the string carries', async () => {
    const phc = hashPasswordSync('pw', CHEAP)
    expect(phc.startsWith('$scrypt$ln=4,r=8,p=1$')).toBe(true)
    expect(verifyPasswordSync('pw', parsePasswordHash(phc))).toBe(true)
    expect(verifyPasswordSync('pW', parsePasswordHash(phc))).toBe(false)
    expect(await verifyPassword('pw', parsePasswordHash(phc))).toBe(true)
  })

  it('reads an argon2 hash made by the reference implementation (its README example, argon2i)', async () => {
    const stored = parsePasswordHash('$argon2i$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG')
    expect(stored).toMatchObject({ scheme: 'argon2i', params: { m: 65536, t: 2, p: 4 } })
    expect(await verifyPassword('password', stored)).toBe(true)
    expect(verifyPasswordSync('password', stored)).toBe(true)
    expect(await verifyPassword('passwore', stored)).toBe(false)
  })

  it('computes argon2id as RFC 9106 says (its argon2id test vector, through node:crypto)', async () => {
    const { argon2Sync } = await import('node:crypto')
    const tag = argon2Sync('argon2id', {
      message: Buffer.alloc(32, 1),
      nonce: Buffer.alloc(16, 2),
      secret: Buffer.alloc(8, 3),
      associatedData: Buffer.alloc(12, 4),
      parallelism: 4,
      tagLength: 32,
      memory: 32,
      passes: 3,
    })
    expect(tag.toString('hex')).toBe('0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659')
  })

  it('verifies an argon2id hash with the parameters the string carries, synchronously and asynchronously alike', async () => {
    const phc = await hashPassword('pw', { scheme: 'argon2id', params: { m: 64, t: 1, p: 2 } })
    expect(phc.startsWith('$argon2id$v=19$m=64,t=1,p=2$')).toBe(true)
    expect(await verifyPassword('pw', parsePasswordHash(phc))).toBe(true)
    expect(verifyPasswordSync('pw', parsePasswordHash(phc))).toBe(true)
    expect(verifyPasswordSync('pW', parsePasswordHash(phc))).toBe(false)
    const salt = Buffer.alloc(16, 7)
    expect(formatPasswordHash(parsePasswordHash(`$argon2id$v=19$m=64,t=1,p=2$${b64(salt)}$${HASH}`))).toBe(`$argon2id$v=19$m=64,t=1,p=2$${b64(salt)}$${HASH}`)
  })

  it('reads a hash made by any scrypt implementation (RFC 7914 test vector)', async () => {
    const salt = Buffer.from('SodiumChloride').toString('base64').replace(/=+$/, '')
    const hash = Buffer.from(
      '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887',
      'hex',
    )
      .toString('base64')
      .replace(/=+$/, '')
    const stored = parsePasswordHash(`$scrypt$ln=14,r=8,p=1$${salt}$${hash}`)
    expect(await verifyPassword('pleaseletmein', stored)).toBe(true)
    expect(await verifyPassword('pleaseletmeout', stored)).toBe(false)
  })

  it('formats what it parses unchanged', () => {
    const phc = `$scrypt$ln=15,r=8,p=1$${SALT}$${HASH}`
    expect(formatPasswordHash(parsePasswordHash(phc))).toBe(phc)
  })

  it.each([
    ['', /PHC string/],
    ['plain text', /PHC string/],
    ['scrypt$ln=15,r=8,p=1$' + SALT + '$' + HASH, /PHC string/],
    ['$bcrypt$xyz', /unknown hash scheme "bcrypt"/],
    ['$pbkdf2-sha256$29000$c2FsdA$aGFzaA', /unknown hash scheme/],
    ['$scrypt$ln=15,r=8,p=1$' + SALT, /form/],
    ['$scrypt$ln=15,r=8,p=1$' + SALT + '$' + HASH + '$', /form/],
    ['$scrypt$ln=15,r=8$' + SALT + '$' + HASH, /ln=<n>,r=<n>,p=<n>/],
    ['$scrypt$r=8,ln=15,p=1$' + SALT + '$' + HASH, /ln=<n>,r=<n>,p=<n>/],
    ['$scrypt$ln=015,r=8,p=1$' + SALT + '$' + HASH, /ln=<n>,r=<n>,p=<n>/],
    ['$scrypt$ln=0,r=8,p=1$' + SALT + '$' + HASH, /ln=<n>/],
    ['$scrypt$ln=21,r=8,p=1$' + SALT + '$' + HASH, /ln must be between 1 and 20/],
    ['$scrypt$ln=20,r=8,p=1$' + SALT + '$' + HASH, /256 MiB/],
    ['$scrypt$ln=15,r=33,p=1$' + SALT + '$' + HASH, /r must be/],
    ['$scrypt$ln=15,r=8,p=17$' + SALT + '$' + HASH, /p must be/],
    ['$scrypt$ln=15,r=8,p=1$' + SALT + '==$' + HASH, /salt is not base64 without padding/],
    ['$scrypt$ln=15,r=8,p=1$' + SALT + '$' + HASH.replace('a', '-'), /hash is not base64/],
    ['$scrypt$ln=15,r=8,p=1$' + SALT.slice(0, -1) + 'B$' + HASH, /salt is not canonical/],
    ['$scrypt$ln=15,r=8,p=1$c2FsdA$' + HASH, /salt must be 8–64 bytes, got 4/],
    ['$scrypt$ln=15,r=8,p=1$' + SALT + '$aGFzaA', /hash must be 16–64 bytes/],
    ['$scrypt$ln=15,r=8,p=1$$' + HASH, /salt is not base64/],
    ['$argon2id$m=65536,t=3,p=4$' + SALT + '$' + HASH, /form \$argon2id\$v=19/],
    ['$argon2id$v=16$m=65536,t=3,p=4$' + SALT + '$' + HASH, /version must be v=19/],
    ['$argon2id$v=19$t=3,m=65536,p=4$' + SALT + '$' + HASH, /m=<n>,t=<n>,p=<n>/],
    ['$argon2id$v=19$m=65536,t=3$' + SALT + '$' + HASH, /m=<n>,t=<n>,p=<n>/],
    ['$argon2id$v=19$m=65536,t=3,p=4,keyid=abc$' + SALT + '$' + HASH, /m=<n>,t=<n>,p=<n>/],
    ['$argon2id$v=19$m=262145,t=3,p=4$' + SALT + '$' + HASH, /m must be between 8 and 262144/],
    ['$argon2id$v=19$m=16,t=1,p=4$' + SALT + '$' + HASH, /8 KiB per lane/],
    ['$argon2id$v=19$m=65536,t=17,p=4$' + SALT + '$' + HASH, /t must be between 1 and 16/],
    ['$argon2id$v=19$m=65536,t=3,p=17$' + SALT + '$' + HASH, /p must be between 1 and 16/],
    ['$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$' + HASH, /salt must be 8–64 bytes/],
    ['$argon2id$v=19$m=65536,t=3,p=4$' + SALT + '$aGFzaA', /hash must be 16–64 bytes/],
    ['$argon2x$v=19$m=65536,t=3,p=4$' + SALT + '$' + HASH, /unknown hash scheme "argon2x"/],
  ])('refuses the malformed hash %j', (phc, message) => {
    expect(() => parsePasswordHash(phc)).toThrow(PasswordHashError)
    expect(() => parsePasswordHash(phc)).toThrow(message)
  })
})
