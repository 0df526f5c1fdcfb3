import { existsSync } from 'node:fs'
import type { Env } from './config.js'

/** Reads `./.env` into the process environment when present (real variables win). */
export function loadDotEnv(env: Env): void {
  if (env !== process.env || !existsSync('.env')) return
  process.loadEnvFile('.env')
}
