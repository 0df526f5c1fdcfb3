import { ConfigError } from '../../src/config/config-error.js'
import { loadConfig } from '../../src/config/config.js'

/** The ConfigError `loadConfig(env)` throws; fails the test when it loads or throws anything else. */
export function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
  throw new Error('expected a ConfigError')
}
