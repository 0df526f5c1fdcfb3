import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { hashPasswordSync } from '../../src/auth/password-hash.js'
import { PRODUCTION_ENV } from '../helpers/production-env.js'
import { assertBuilt, killIfRunning, startServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { TEST_HASH_SPEC } from '../helpers/test-app.js'

const run = promisify(execFile)

/**
 * The production install of the README: built output plus runtime dependencies only
 * (`npm ci --omit=dev`), started as `node dist/src/cli/main.js serve` with NODE_ENV=production.
 * Nothing of the build (TypeScript, Vite, vitest) may be needed at run time.
 */
describe('a production install (npm ci --omit=dev on built output)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-prod-'))
  let server: ServerProcess | undefined

  afterAll(async () => {
    await killIfRunning(server)
    rmSync(dir, { recursive: true, force: true })
  })

  it('installs without dev dependencies and serves the API and the console', { timeout: 240_000 }, async () => {
    assertBuilt()
    for (const file of ['package.json', 'package-lock.json']) cpSync(file, path.join(dir, file))
    cpSync('dist/src', path.join(dir, 'dist/src'), { recursive: true })
    cpSync('dist/console', path.join(dir, 'dist/console'), { recursive: true })
    // The device agent package (an npm workspace the server imports the protocol from), as built.
    for (const file of ['package.json', 'dist']) cpSync(path.join('packages/device-agent', file), path.join(dir, 'packages/device-agent', file), { recursive: true })
    await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir, timeout: 200_000 })
    // The build tools are not there: whatever starts, starts without them.
    for (const dev of ['typescript', 'vite', 'vitest', '@vitejs/plugin-react']) expect(existsSync(path.join(dir, 'node_modules', dev)), dev).toBe(false)

    const users = JSON.stringify({ admin: { password_hash: hashPasswordSync('a-long-production-password', TEST_HASH_SPEC), role: 'admin' } })
    server = await startServerProcess(
      { ...PRODUCTION_ENV, DATA_DIR: path.join(dir, 'data'), CLOUD_AUTH_USERS: users, PLATFORM_CONSOLE_TOKEN: 'prod-console-token-of-32-characters' },
      false,
      path.join(dir, 'dist/src/cli/main.js'),
    )
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    const page = await fetch(`${server.url}/`, { headers: { accept: 'text/html' } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<div id="root">')
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'a-long-production-password' }),
    })
    expect(login.status).toBe(200)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })
})
