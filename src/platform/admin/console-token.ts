import { randomBytes } from 'node:crypto'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { getOrCreateSetting } from '../../storage/settings-repository.js'
import type { Db } from '../../storage/storage.js'

/** Where the generated console token is written, in `DATA_DIR`. */
export const CONSOLE_TOKEN_FILE = 'console-token'

/**
 * The console token when `PLATFORM_CONSOLE_TOKEN` is unset: generated once and stored in the
 * database (shared by every instance). The instance that generates it writes it once to
 * `DATA_DIR/console-token`, readable by its owner only (0600), and logs where: never the token
 * itself, as logs are shipped and kept where secrets must not be (contract §17).
 */
export async function generatedConsoleToken(db: Db, dataDir: string, log: Pick<FastifyBaseLogger, 'warn' | 'error'>): Promise<string> {
  const { value, created } = await getOrCreateSetting(db, 'platform_console_token', () => randomBytes(24).toString('base64url'))
  if (!created) return value
  const file = path.resolve(dataDir, CONSOLE_TOKEN_FILE)
  try {
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, `${value}\n`, { mode: 0o600 })
    // `mode` applies to a file it creates; one left from an earlier database keeps its own until this.
    await chmod(file, 0o600)
    log.warn(`Generated the platform console token (X-Console-Token): written to ${file} (mode 0600). Read it there, keep it elsewhere, delete the file.`)
  } catch (err) {
    log.error(
      { err },
      `Generated the platform console token (X-Console-Token) but could not write it to ${file}: read it from the database (settings, key platform_console_token) or set PLATFORM_CONSOLE_TOKEN (at least 32 characters)`,
    )
  }
  return value
}
