import { SharedRateLimit } from '../http/shared-rate-limit.js'
import type { Storage } from '../storage/storage.js'
import { clientAddressKey } from './client-address.js'
import { LoginThrottle, throttleKey } from './login-throttle.js'

/** Logins (password and mini-program, right or wrong) per client address (an IPv6 /64) a minute (contract §17). */
export const LOGINS_PER_ADDRESS = 30
export const LOGIN_ADDRESS_WINDOW_MS = 60_000
/** Failed logins per (client address, username) within 15 minutes (contract §3). */
export const FAILURES_PER_PAIR = 10
export const PAIR_WINDOW_MS = 15 * 60_000
/**
 * Failed logins for one username from any number of addresses within 15 minutes: past them every
 * attempt for that username is refused (429) until the window ends, so a botnet guesses at most
 * 20 passwords of an account per 15 minutes (about 1,900 a day) however many addresses it has.
 */
export const FAILURES_PER_USERNAME = 20
export const USERNAME_WINDOW_MS = 15 * 60_000

const TOO_MANY = 'Too many failed logins; try again later'

/** An attempt let through to the password check; `failed`/`succeeded`/`abandoned` settle its counts. */
export interface LoginAttempt {
  /** Wrong credentials: the counts stay. */
  failed(): void
  /** Right credentials: the username's and the pair's counts start afresh. */
  succeeded(): Promise<void>
  /** The credentials were not tested (server busy, database error): the attempt does not count. */
  abandoned(): Promise<void>
}

/**
 * The limits a gateway login passes before its password is hashed, all counted in the database so
 * that they hold across instances: logins per client address (any outcome, `rate_hits`), failures
 * per (address, username) and failures per username (`login_counters`). Any of them → 429
 * `rate_limited` with `Retry-After`.
 */
export class LoginLimits {
  private readonly perAddress: SharedRateLimit
  private readonly perPair: LoginThrottle
  private readonly perUsername: LoginThrottle

  constructor(storage: Pick<Storage, 'db' | 'clock'>, perPair?: LoginThrottle) {
    this.perAddress = new SharedRateLimit(storage.db, 'login-address', LOGINS_PER_ADDRESS, LOGIN_ADDRESS_WINDOW_MS, storage.clock)
    this.perPair = perPair ?? new LoginThrottle(storage, 'login', FAILURES_PER_PAIR, PAIR_WINDOW_MS)
    this.perUsername = new LoginThrottle(storage, 'login-user', FAILURES_PER_USERNAME, USERNAME_WINDOW_MS)
  }

  /** Counts a login (of any kind) from `address`; 429 past 30 a minute. */
  async address(address: string): Promise<void> {
    await this.perAddress.hit(clientAddressKey(address), 'Too many logins from this address; try again later')
  }

  /** Counts a password attempt for `username` from `address` (the address limit included); 429 past any limit. */
  async password(address: string, username: string): Promise<LoginAttempt> {
    await this.address(address)
    const pair = throttleKey(address, username)
    const user = JSON.stringify(username)
    await this.perPair.claim(pair, TOO_MANY)
    try {
      await this.perUsername.claim(user, TOO_MANY)
    } catch (err) {
      await this.perPair.release(pair)
      throw err
    }
    return {
      failed: () => {},
      succeeded: async () => {
        await this.perPair.succeed(pair)
        await this.perUsername.succeed(user)
      },
      abandoned: async () => {
        await this.perPair.release(pair)
        await this.perUsername.release(user)
      },
    }
  }
}
