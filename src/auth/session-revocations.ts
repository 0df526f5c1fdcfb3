import { sql } from 'kysely'
import { CallBatcher } from '../lib/call-batcher.js'
import { epochMillis, type DatabaseClock } from '../storage/database-clock.js'
import type { Db } from '../storage/storage.js'
import { isConnectionFailure, isDependencyUnavailable } from '../storage/unreachable-database.js'

/** Revoked session ids remembered by an instance (a revocation is final, so this cache is never stale). */
const KNOWN_REVOKED_MAX = 10_000

/**
 * Sessions ended by logout (contract §17), in the database so that every instance refuses their
 * tokens from the moment the logout is answered. Each authenticated request reads its session's
 * row by primary key; the reads of requests arriving together go as one `IN (…)` statement. An
 * instance remembers the sessions it found revoked (never the ones it found live: a logout on
 * another instance must count at once).
 */
export class SessionRevocations {
  private readonly known = new Set<string>()
  private readonly lookups: CallBatcher<string, boolean>

  constructor(
    private readonly db: Db,
    private readonly clock: DatabaseClock,
  ) {
    this.lookups = new CallBatcher((sids) => this.lookUp(sids), { maxBatch: 256, concurrency: 4 })
  }

  /** Ends session `sid`: its tokens are refused everywhere. `expiresAtMs`: after it no token of the session is valid anyway. */
  async revoke(sid: string, expiresAtMs: number): Promise<void> {
    await this.db
      .insertInto('revoked_sessions')
      .values({ sid, expires_at: Math.ceil(expiresAtMs) })
      .onConflict((oc) => oc.column('sid').doNothing())
      .execute()
    this.remember(sid)
  }

  /**
   * Whether session `sid` was ended. While the database cannot be reached the answer is "no"
   * unless this instance knows otherwise: requests that need no database (forwarding to a
   * machine) go on through an outage, as before sessions existed, and no logout can be written
   * meanwhile either. Every other error is thrown.
   */
  async isRevoked(sid: string): Promise<boolean> {
    if (this.known.has(sid)) return true
    try {
      return await this.lookups.call(sid)
    } catch (err) {
      if (isConnectionFailure(err) || isDependencyUnavailable(err)) return false
      throw err
    }
  }

  private async lookUp(sids: string[]): Promise<boolean[]> {
    const unique = [...new Set(sids)]
    const rows = await this.db.selectFrom('revoked_sessions').select('sid').where('sid', 'in', unique).execute()
    const revoked = new Set(rows.map((row) => row.sid))
    for (const sid of revoked) this.remember(sid)
    return sids.map((sid) => revoked.has(sid))
  }

  private remember(sid: string): void {
    if (this.known.size >= KNOWN_REVOKED_MAX) this.known.delete(this.known.values().next().value!)
    this.known.add(sid)
  }
}

/** Deletes revocations of sessions no token of which can be valid any more (database clock); returns how many. */
export async function pruneRevokedSessions(db: Db, clock: DatabaseClock): Promise<number> {
  const result = await db.deleteFrom('revoked_sessions').where('expires_at', '<=', sql<number>`${epochMillis(clock)}`).executeTakeFirst()
  return Number(result.numDeletedRows)
}
