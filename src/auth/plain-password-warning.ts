import type { Config } from '../config/config.js'

/**
 * With NODE_ENV=production, one warning at start naming every user CLOUD_AUTH_USERS still gives
 * a plain-text `password` (contract §3); nothing otherwise. Returns the message it logged.
 */
export function warnAboutPlainPasswords(config: Pick<Config, 'production' | 'authUsers'>, log: { warn(message: string): void }): string | undefined {
  if (!config.production) return undefined
  const plain = Object.entries(config.authUsers)
    .filter(([, user]) => user.plainTextPassword)
    .map(([username]) => username)
  if (plain.length === 0) return undefined
  const message = `CLOUD_AUTH_USERS gives these users a plain-text password: ${plain.join(', ')}. Replace each "password" with a "password_hash" from \`fleetgate hash-password\`.`
  log.warn(message)
  return message
}
