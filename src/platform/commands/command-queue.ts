import { AppError } from '../../errors.js'
import { epochMillis, type DatabaseClock } from '../../storage/database-clock.js'
import type { Db, Storage, Tx } from '../../storage/storage.js'
import { COMMAND_STATUSES, QUEUED_STATUSES, type CommandRow, type CommandStatus } from './command-record.js'
import { deliveryRules, type DeliveryPolicy } from './delivery-rules.js'
import type { Ack, CommandQuery } from './command-schemas.js'
import { newestFirstPage } from '../../storage/paging.js'
import type { EventPublisher } from '../../events/event-bus.js'
import { commandEvent, type CommandEvent } from './command-event.js'
import { adjustTallies, entered, left, talliedCounts, type TallyChange } from './command-tallies.js'

/**
 * At-least-once command queue (contract §7): pending → delivered (attempts + 1) → done |
 * failed; delivered and not acked within the ack time-out → delivered again, same id; after
 * `maxAttempts` deliveries → failed; never delivered within the TTL → expired.
 *
 * The time rules are applied by `sweep`, which runs before every poll (for that device),
 * before every admin read, and periodically: stored states are exact whenever read.
 *
 * Every time the queue writes (queued, delivered, acknowledged) and compares is the database's
 * clock (`storage.clock`, in epoch milliseconds), never this instance's: one instance delivers a
 * command and another decides whether its ack is overdue, so hosts whose clocks disagree must
 * neither deliver a command again early nor expire one too soon (docs/coordination.md, rule 3).
 */
export class CommandQueue {
  private readonly db: Db
  /** The database's clock (tests give one they set). */
  private readonly clock: DatabaseClock
  /** Storage capability: a poll skips rows another poll has locked instead of waiting for its commit. */
  private readonly skipLocked: boolean

  constructor(
    storage: Pick<Storage, 'db' | 'clock' | 'skipLocked'>,
    private readonly policy: DeliveryPolicy,
    private readonly events?: EventPublisher<CommandEvent>,
  ) {
    this.db = storage.db
    this.clock = storage.clock
    this.skipLocked = storage.skipLocked
  }

  /** Now on the database's clock, in epoch milliseconds, as evaluated by the statement using it. */
  private get now() {
    return epochMillis(this.clock)
  }

  /** Raises a `command` event for each row (its state just changed and was committed); `at` is when it is announced. */
  announce(rows: readonly CommandRow[], at = Date.now()): void {
    for (const row of rows) {
      const event = commandEvent(row, at)
      if (event) this.events?.publish(event)
    }
  }

  /** Queues a command, `created_at` now on the database's clock (its TTL runs from there). */
  async enqueue(db: Db | Tx, deviceId: string, action: string, params: Record<string, unknown>): Promise<CommandRow> {
    return db
      .insertInto('platform_commands')
      .values({ device_id: deviceId, action, params: JSON.stringify(params), status: 'pending', attempts: 0, created_at: this.now })
      .returningAll()
      .executeTakeFirstOrThrow()
  }

  /** Expires never-delivered commands past their TTL and fails those out of attempts (of one device, or all). */
  async sweep(deviceId?: string): Promise<void> {
    const changed = await this.db.transaction().execute(async (tx) => {
      const rows = await this.applyTimeRules(deviceId, tx)
      await adjustTallies(tx, rows.map(entered))
      return rows
    })
    this.announce(changed)
  }

  /** The sweep's UPDATEs; returns the rows they changed (each change happens once, whoever sweeps). */
  private async applyTimeRules(deviceId: string | undefined, db: Tx): Promise<CommandRow[]> {
    const rules = deliveryRules(this.policy, this.now)
    const expired = await db
      .updateTable('platform_commands')
      .set({ status: 'expired', error: 'not delivered within the TTL' })
      .where(rules.expired)
      .$if(deviceId !== undefined, (q) => q.where('device_id', '=', deviceId!))
      .returningAll()
      .execute()
    const failed = await db
      .updateTable('platform_commands')
      .set({ status: 'failed', error: `not acknowledged after ${this.policy.maxAttempts} deliveries` })
      .where(rules.outOfAttempts)
      .$if(deviceId !== undefined, (q) => q.where('device_id', '=', deviceId!))
      .returningAll()
      .execute()
    return [...expired, ...failed]
  }

  /**
   * Hands out up to `limit` due commands, oldest first, and marks them delivered, in one
   * transaction: pick the oldest due ids (PostgreSQL: FOR UPDATE SKIP LOCKED, so a concurrent
   * poll on any instance passes over rows another poll holds instead of waiting for its
   * commit), then UPDATE … WHERE id IN (picked) AND <still due> RETURNING. SQLite runs one
   * transaction at a time.
   */
  async poll(deviceId: string, limit: number): Promise<CommandRow[]> {
    const { due } = deliveryRules(this.policy, this.now)
    let swept: CommandRow[] = []
    const rows = await this.db.transaction().execute(async (tx) => {
      swept = await this.applyTimeRules(deviceId, tx)
      const picked = await tx
        .selectFrom('platform_commands')
        .select('id')
        .where('device_id', '=', deviceId)
        .where(due)
        .orderBy('id')
        .limit(limit)
        .$if(this.skipLocked, (q) => q.forUpdate().skipLocked())
        .execute()
      await adjustTallies(tx, swept.map(entered))
      if (picked.length === 0) return []
      return tx
        .updateTable('platform_commands')
        .set((eb) => ({ status: 'delivered', attempts: eb('attempts', '+', 1), delivered_at: this.now }))
        .where(
          'id',
          'in',
          picked.map((r) => r.id),
        )
        .where(due)
        .returningAll()
        .execute()
    })
    rows.sort((a, b) => a.id - b.id)
    this.announce([...swept, ...rows])
    return rows
  }

  /** How many commands a poll would return now (heartbeat answer); reads only, as the sweep would leave them. */
  async countDue(deviceId: string): Promise<number> {
    const row = await this.db
      .selectFrom('platform_commands')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('device_id', '=', deviceId)
      .where(deliveryRules(this.policy, this.now).due)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /**
   * Applies acks all or nothing. The first ack of a command sets done/failed; a later one
   * changes nothing and is reported as a duplicate. An id of another device → 404.
   */
  async ack(deviceId: string, acks: Ack[]): Promise<{ acked: number; duplicates: number[] }> {
    const changed: CommandRow[] = []
    const answer = await this.db.transaction().execute(async (tx) => {
      const duplicates: number[] = []
      const tallies: TallyChange[] = []
      for (const ack of acks) {
        const row = await tx.selectFrom('platform_commands').select(['device_id', 'acked_at', 'status']).where('id', '=', ack.id).executeTakeFirst()
        if (!row || row.device_id !== deviceId) throw new AppError('not_found', `No command ${ack.id} for device ${deviceId}`, { id: ack.id })
        if (row.acked_at !== null) {
          duplicates.push(ack.id)
          continue
        }
        const updated = await tx
          .updateTable('platform_commands')
          .set({
            status: ack.success ? 'done' : 'failed',
            acked_at: this.now,
            result: ack.result === undefined ? null : JSON.stringify(ack.result),
            error: ack.success ? null : (ack.error ?? 'reported failed by the device'),
          })
          .where('id', '=', ack.id)
          .where('acked_at', 'is', null)
          .returningAll()
          .executeTakeFirst()
        // A concurrent ack of the same id committed first.
        if (!updated) duplicates.push(ack.id)
        else {
          changed.push(updated)
          tallies.push(left({ id: ack.id, status: row.status }), entered(updated))
        }
      }
      await adjustTallies(tx, tallies)
      return { acked: acks.length, duplicates }
    })
    this.announce(changed)
    return answer
  }

  /** A device's queued commands (pending, delivered), oldest first. */
  async queued(deviceId: string, limit = 100): Promise<CommandRow[]> {
    return this.db
      .selectFrom('platform_commands')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('status', 'in', QUEUED_STATUSES)
      .orderBy('id')
      .limit(limit)
      .execute()
  }

  /** Newest first; `next_before` when there is more. */
  async list(q: CommandQuery): Promise<{ rows: CommandRow[]; next_before?: number }> {
    const rows = await this.db
      .selectFrom('platform_commands')
      .selectAll()
      .$if(q.device_id !== undefined, (qb) => qb.where('device_id', '=', q.device_id!))
      .$if(q.status !== undefined, (qb) => qb.where('status', '=', q.status!))
      .$if(q.before !== undefined, (qb) => qb.where('id', '<', q.before!))
      .orderBy('id', 'desc')
      .limit(q.limit + 1)
      .execute()
    return newestFirstPage(rows, q.limit)
  }

  /** Queued states counted live (few, by the status index); finished ones from their tallies, not from the whole history. */
  async countByStatus(): Promise<Record<CommandStatus, number>> {
    const [queued, finished] = await Promise.all([
      this.db
        .selectFrom('platform_commands')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .where('status', 'in', QUEUED_STATUSES)
        .groupBy('status')
        .execute(),
      talliedCounts(this.db),
    ])
    const counts = { ...(Object.fromEntries(COMMAND_STATUSES.map((s) => [s, 0])) as Record<CommandStatus, number>), ...finished }
    for (const row of queued) if (row.status in counts) counts[row.status as CommandStatus] = Number(row.n)
    return counts
  }

  /** Deletes queued commands (pending, delivered), or with `all` the history too. */
  async clear(tx: Tx, filter: { device_id?: string; all?: boolean }): Promise<number> {
    const deleted = await tx
      .deleteFrom('platform_commands')
      .$if(filter.device_id !== undefined, (q) => q.where('device_id', '=', filter.device_id!))
      .$if(!filter.all, (q) => q.where('status', 'in', QUEUED_STATUSES))
      .returning(['id', 'status'])
      .execute()
    await adjustTallies(tx, deleted.map(left))
    return deleted.length
  }
}
