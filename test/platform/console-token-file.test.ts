import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/config.js'
import { openStorage } from '../../src/storage/storage.js'
import { DIALECTS, testDatabase } from '../helpers/dialects.js'
import { TEST_AUTH_USERS } from '../helpers/test-app.js'

/** A server on `database`'s storage with DATA_DIR `dataDir` and no PLATFORM_CONSOLE_TOKEN; returns its log text and closes it. */
async function startOnce(database: ReturnType<typeof testDatabase>, dataDir: string) {
  let log = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      log += String(chunk)
      done()
    },
  })
  const storage = await openStorage(database.target)
  await storage.migrate()
  const app = await buildApp({ ...loadConfig({ CLOUD_AUTH_USERS: TEST_AUTH_USERS, DATA_DIR: dataDir }), database: database.target }, { storage, loggerInstance: pino({ level: 'info' }, stream) })
  await app.ready()
  const asConsole = (token: string) => app.inject({ method: 'GET', url: '/api/admin/devices', headers: { 'x-console-token': token } })
  return { log: () => log, asConsole, close: () => app.close() }
}

describe.each(DIALECTS)('the generated console token on %s', (dialect) => {
  it('is written once to DATA_DIR/console-token (mode 0600), never to the log, which says where it is', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fg-console-token-'))
    // A file, not memory: the second start must see the first's database.
    const database = testDatabase(dialect, path.join(dir, 'fleetgate.db'))
    const dataDir = path.join(dir, 'data')
    const file = path.join(dataDir, 'console-token')
    try {
      const first = await startOnce(database, dataDir)
      const token = readFileSync(file, 'utf8').trim()
      expect(token.length).toBeGreaterThanOrEqual(32)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(first.log()).not.toContain(token)
      expect(first.log()).toContain(file)
      expect((await first.asConsole(token)).statusCode).toBe(200)
      await first.close()

      // A restart on the same database keeps the token and does not write the file again.
      writeFileSync(file, 'operator moved it away\n')
      const second = await startOnce(database, dataDir)
      expect(readFileSync(file, 'utf8')).toBe('operator moved it away\n')
      expect(second.log()).not.toContain(token)
      expect(second.log()).not.toMatch(/console token/)
      expect((await second.asConsole(token)).statusCode).toBe(200)
      await second.close()
    } finally {
      await database.cleanup()
    }
  })
})
