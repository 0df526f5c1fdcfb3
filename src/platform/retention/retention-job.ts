import type { FastifyBaseLogger } from 'fastify'
import { PeriodicTask } from '../../lib/periodic-task.js'
import { PrunePacer, pruneUntilShort, type Pacer } from '../../storage/prune-pacer.js'
import type { PruneStep } from '../../storage/prune-step.js'
import type { Db } from '../../storage/storage.js'
import { dropTalliesBefore } from '../../storage/window-tallies.js'
import type { DatabaseClock } from '../../storage/database-clock.js'
import { pruneLoginCounters } from '../../auth/login-throttle.js'
import { pruneRevokedSessions } from '../../auth/session-revocations.js'
import { pruneRateHits } from '../../http/shared-rate-limit.js'
import { deleteExpiredBindCodes } from '../binding/bind-store.js'
import type { CommandQueue } from '../commands/command-queue.js'
import { pruneLogBatch } from '../logs/log-store.js'
import type { TelemetryStore } from '../telemetry/telemetry-store.js'

const DAY_MS = 86_400_000
export const RETENTION_INTERVAL_MS = 60_000

export interface RetentionParts {
  db: Db
  telemetry: TelemetryStore
  commands: CommandQueue
  telemetryRetentionDays: number
  logRetentionDays: number
  /** The database's clock: dates the expiry of login counters, rate-limit hits and revoked sessions (not pruned without it). */
  clock?: DatabaseClock
  /** Prunes production data (§16) past its retention, paced as told; answers the rows deleted. Not pruned without it. */
  production?: (now: number, pacer: Pacer) => Promise<number>
  /** Runs a pass unless another instance runs one (resolves undefined then); default: always runs. */
  exclusive?: <T>(fn: () => Promise<T>) => Promise<T | undefined>
}

export interface RetentionResult {
  telemetry: number
  logs: number
  /** Expired login counters, rate-limit hits and revoked sessions deleted. */
  limits: number
  /** Production events, state rows, hourly and daily figures and jobs deleted. */
  production: number
}

/**
 * Periodic housekeeping: prunes telemetry and logs past their retention in small batches, oldest
 * first along the time index (SQLite's telemetry: in row order over its point ranges), sized and paced by a `PrunePacer`, drops the summary's tallies of the pruned minutes, applies the command time rules, drops expired
 * binding codes, login counters and rate-limit hits whose window ended, and revoked sessions no token of which can still be valid. Runs never overlap; `stop` waits for a running pass. `now` dates the retention
 * of telemetry, logs and binding codes; the command time rules are on the database's clock.
 */
export class RetentionJob {
  private readonly task: PeriodicTask

  constructor(
    private readonly parts: RetentionParts,
    log: FastifyBaseLogger,
  ) {
    this.task = new PeriodicTask(
      async (signal) => {
        const r = await this.runExclusive(Date.now(), signal)
        if (r && r.telemetry + r.logs + r.limits + r.production > 0) log.info({ pruned: r }, 'platform retention pruned old rows')
      },
      (err) => log.error({ err }, 'platform retention failed'),
    )
  }

  /** One pass; `signal` stops it between two batches (what is deleted stays deleted). */
  async runOnce(now = Date.now(), signal?: AbortSignal): Promise<RetentionResult> {
    const { db, telemetry, commands, telemetryRetentionDays, logRetentionDays } = this.parts
    const telemetryCutoff = now - telemetryRetentionDays * DAY_MS
    const logCutoff = now - logRetentionDays * DAY_MS
    const result = {
      telemetry: await pruneInBatches((n, from) => telemetry.pruneBatch(telemetryCutoff, n, from), signal),
      logs: await pruneInBatches((n, from) => pruneLogBatch(db, logCutoff, n, from), signal),
      limits: 0,
      production: 0,
    }
    if (signal?.aborted) return result
    // Both passes reached their cutoff: the tallies of the minutes before it count nothing left.
    await dropTalliesBefore(db, 'telemetry', telemetryCutoff)
    await dropTalliesBefore(db, 'device_errors', logCutoff)
    if (this.parts.production) result.production = await this.parts.production(now, new PrunePacer(signal))
    if (signal?.aborted) return result
    await commands.sweep()
    await deleteExpiredBindCodes(db, now)
    const { clock } = this.parts
    if (clock) result.limits = (await pruneLoginCounters(db, clock)) + (await pruneRateHits(db, clock)) + (await pruneRevokedSessions(db, clock))
    return result
  }

  /** One pass, unless another instance is running one: then undefined. */
  async runExclusive(now = Date.now(), signal?: AbortSignal): Promise<RetentionResult | undefined> {
    const { exclusive } = this.parts
    return exclusive ? exclusive(() => this.runOnce(now, signal)) : this.runOnce(now, signal)
  }

  /** A first pass right away (a backlog left by a stopped server is not kept a minute longer), then periodic ones. */
  start(intervalMs = RETENTION_INTERVAL_MS): void {
    this.task.start(intervalMs, { immediately: true })
  }

  /** Stops the timer and a pass under way at its next batch, and waits for it: shutdown never waits on a backlog. */
  stop(): Promise<void> {
    return this.task.stop()
  }
}

/** Batches until one comes back short; each starts where the previous one ended. */
async function pruneInBatches(prune: (batch: number, from: number | undefined) => Promise<PruneStep>, signal?: AbortSignal): Promise<number> {
  let from: number | undefined
  const { deleted } = await pruneUntilShort(new PrunePacer(signal), async (size) => {
    const step = await prune(size, from)
    from = step.next
    return step.deleted
  })
  return deleted
}
