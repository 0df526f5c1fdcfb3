import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hashPasswordSync, parsePasswordHash, verifyPassword } from '../../src/auth/password-hash.js'
import { PRODUCTION_ENV } from '../helpers/production-env.js'
import { assertBuilt, CLI, runCli, startServerProcess } from '../helpers/server-process.js'

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'fg-passwords-'))

/** `fleetgate hash-password` as a process, `input` piped to its standard input. */
async function hashPasswordProcess(input: string): Promise<{ code: number | null; out: string; err: string }> {
  assertBuilt()
  const child = spawn(process.execPath, [CLI, 'hash-password'], { env: { PATH: process.env.PATH ?? '' }, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  child.stdin.end(input)
  const [code] = await once(child, 'exit')
  return { code: code as number | null, out, err }
}

describe('passwords in a started fleetgate', () => {
  it('fleetgate hash-password prints a hash of the piped line that a server then accepts', async () => {
    const hashed = await hashPasswordProcess('ops-pass\n')
    expect(hashed.code).toBe(0)
    const phc = hashed.out.trim()
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(await verifyPassword('ops-pass', parsePasswordHash(phc))).toBe(true)

    const users = { admin: { password: 'Strong-Admin-Pw', role: 'admin' }, eve: { password: 'Eve-Pw-123', role: 'user' }, ops: { password_hash: phc, role: 'user' } }
    const server = await startServerProcess({
      DATA_DIR: path.join(tempDir(), 'data'),
      ...PRODUCTION_ENV,
      CLOUD_AUTH_USERS: JSON.stringify(users),
    })
    try {
      const login = (username: string, password: string) =>
        fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
      expect((await login('ops', 'ops-pass')).status).toBe(200)
      expect((await login('eve', 'Eve-Pw-123')).status).toBe(200)
      expect((await login('ops', 'Eve-Pw-123')).status).toBe(401)
      const warnings = server.stdout().split('\n').filter((line) => line.includes('plain-text password'))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/plain-text password: admin, eve\b/)
      expect(server.stdout() + server.stderr()).not.toMatch(/Strong-Admin-Pw|Eve-Pw-123/)
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
  })

  it('fleetgate hash-password exits 2 on an empty password', async () => {
    const hashed = await hashPasswordProcess('\n')
    expect(hashed.code).toBe(2)
    expect(hashed.out).toBe('')
    expect(hashed.err).toMatch(/the password is empty/)
  })

  it.each([
    ['an argon2id hash asking for 1 GiB', { ops: { password_hash: '$argon2id$v=19$m=1048576,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA', role: 'user' } }, /user ops: password_hash argon2id m must be between 8 and 262144/],
    ['both password and password_hash', { ops: { password: 'p', password_hash: hashPasswordSync('p', { scheme: 'scrypt', params: { ln: 4, r: 8, p: 1 } }), role: 'user' } }, /user ops: give either password or password_hash, not both/],
  ])('refuses to start with %s: one line naming CLOUD_AUTH_USERS and the user, exit 1', async (_case, users, message) => {
    const run = runCli(['serve'], { DATA_DIR: path.join(tempDir(), 'data'), CLOUD_AUTH_USERS: JSON.stringify(users) })
    expect(await run.exited).toBe(1)
    expect(run.err().trim().split('\n')).toHaveLength(1)
    expect(run.err()).toMatch(/^fleetgate: invalid configuration: CLOUD_AUTH_USERS: /)
    expect(run.err()).toMatch(message)
  })
})
