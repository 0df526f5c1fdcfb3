import { sql } from 'kysely'
import type { BroadcastChannel } from '../events/event-bus.js'
import { CallBatcher } from '../lib/call-batcher.js'
import { epochMillis, type DatabaseClock } from '../storage/database-clock.js'
import type { Db } from '../storage/storage.js'
import { isConnectionFailure, isDependencyUnavailable } from '../storage/unreachable-database.js'

/** Revoked session ids remembered by an instance (a revocation is final, so this cache is never stale). */
const KNOWN_REVOKED_MAX = 10_000
/** Sessions remembered as live (each for `liveForMs`); beyond, the oldest answer is forgotten. */
const KNOWN_LIVE_MAX = 50_000
/** How long an instance takes a session it found live in the database as live without asking again. */
export const SESSION_LIVE_CACHE_MS = 5_000

export interface SessionRevocationOptions {
  /** Where logouts are announced to the other instances and heard from them (NATS; nothing on one instance). */
  channel?: BroadcastChannel
  /** How long a "live" answer from the database is reused (default SESSION_LIVE_CACHE_MS). */
  liveForMs?: number
  /** A monotonic clock in milliseconds (tests set it). */
  now?: () => number
}

/**
 * Sessions ended by logout (contract §17), in the database so that every instance refuses their
 * tokens, and announced on the broadcast channel so that every instance learns it at once.
 *
 * The common case costs no database work: a session found live is taken as live for
 * `liveForMs` (5 s), and a logout on any instance is broadcast (signed with the cluster key) to
 * every other one, which drops the session from that cache and refuses it from the moment the
 * message arrives (the logout is answered once the NATS server has it). The database is read (by primary key; the reads of requests arriving
 * together go as one `IN (…)` statement) only when the cache has no fresh answer: the first
 * request of a session on an instance, and once per `liveForMs` after. So a broadcast missed
 * (NATS down, instances sharing a database without a bus) still counts within `liveForMs`.
 * Revoked sessions are remembered for good (a revocation is final).
 */
export class SessionRevocations {
  private readonly known = new Set<string>()
  /** Session id → when (on `now`) the database last said it was live; oldest first. */
  private readonly live = new Map<string, number>()
  private readonly lookups: CallBatcher<string, boolean>
  private readonly endedListeners = new Set<(sid: string) => void>()
  private readonly channel: BroadcastChannel | undefined
  private readonly liveForMs: number
  private readonly now: () => number
  private readonly stopListening: () => void

  constructor(
    private readonly db: Db,
    private readonly clock: DatabaseClock,
    options: SessionRevocationOptions = {},
  ) {
    this.lookups = new CallBatcher((sids) => this.lookUp(sids), { maxBatch: 256, concurrency: 4 })
    this.channel = options.channel
    this.liveForMs = options.liveForMs ?? SESSION_LIVE_CACHE_MS
    this.now = options.now ?? (() => performance.now())
    this.stopListening = this.channel?.listen((message) => this.heard(message)) ?? (() => {})
  }

  /** Ends session `sid`: its tokens are refused everywhere. `expiresAtMs`: after it no token of the session is valid anyway. */
  async revoke(sid: string, expiresAtMs: number): Promise<void> {
    await this.db
      .insertInto('revoked_sessions')
      .values({ sid, expires_at: Math.ceil(expiresAtMs) })
      .onConflict((oc) => oc.column('sid').doNothing())
      .execute()
    this.ended(sid)
    await this.channel?.send(JSON.stringify({ sid }))
  }

  /**
   * Whether session `sid` was ended. While the database cannot be reached the answer is "no"
   * unless this instance knows otherwise: requests that need no database (forwarding to a
   * machine) go on through an outage, as before sessions existed, and no logout can be written
   * meanwhile either. Every other error is thrown.
   */
  async isRevoked(sid: string): Promise<boolean> {
    const known = this.knownAnswer(sid)
    if (known !== undefined) return known
    try {
      return await this.lookups.call(sid)
    } catch (err) {
      if (isConnectionFailure(err) || isDependencyUnavailable(err)) return false
      throw err
    }
  }

  /** What this instance knows without the database: ended (true), live a moment ago (false), or undefined (ask `isRevoked`). */
  knownAnswer(sid: string): boolean | undefined {
    if (this.known.has(sid)) return true
    const checked = this.live.get(sid)
    return checked !== undefined && this.now() - checked < this.liveForMs ? false : undefined
  }

  /** Whether this instance already knows `sid` ended (no database read). */
  knownRevoked(sid: string): boolean {
    return this.known.has(sid)
  }

  /** Calls `listener` with every session ended from now on, here or (announced on the channel) on another instance; returns the unsubscribe. */
  onEnded(listener: (sid: string) => void): () => void {
    this.endedListeners.add(listener)
    return () => this.endedListeners.delete(listener)
  }

  close(): void {
    this.stopListening()
    this.endedListeners.clear()
  }

  private async lookUp(sids: string[]): Promise<boolean[]> {
    const unique = [...new Set(sids)]
    const rows = await this.db.selectFrom('revoked_sessions').select('sid').where('sid', 'in', unique).execute()
    const revoked = new Set(rows.map((row) => row.sid))
    const at = this.now()
    for (const sid of unique) {
      if (revoked.has(sid)) this.remember(sid)
      // A logout heard while the read ran wins (`known` is asked first).
      else this.seenLive(sid, at)
    }
    return sids.map((sid) => revoked.has(sid))
  }

  /** A message on the channel: another instance ended a session. */
  private heard(message: string): void {
    let sid: unknown
    try {
      sid = (JSON.parse(message) as { sid?: unknown }).sid
    } catch {
      return
    }
    if (typeof sid === 'string' && sid.length > 0 && sid.length <= 64) this.ended(sid)
  }

  private ended(sid: string): void {
    this.remember(sid)
    for (const listener of this.endedListeners) {
      try {
        listener(sid)
      } catch {
        // One broken listener must not keep the others from hearing it.
      }
    }
  }

  private seenLive(sid: string, at: number): void {
    this.live.delete(sid)
    if (this.live.size >= KNOWN_LIVE_MAX) this.live.delete(this.live.keys().next().value!)
    this.live.set(sid, at)
  }

  private remember(sid: string): void {
    this.live.delete(sid)
    if (this.known.size >= KNOWN_REVOKED_MAX) this.known.delete(this.known.values().next().value!)
    this.known.add(sid)
  }
}

/** Deletes revocations of sessions no token of which can be valid any more (database clock); returns how many. */
export async function pruneRevokedSessions(db: Db, clock: DatabaseClock): Promise<number> {
  const result = await db.deleteFrom('revoked_sessions').where('expires_at', '<=', sql<number>`${epochMillis(clock)}`).executeTakeFirst()
  return Number(result.numDeletedRows)
}
