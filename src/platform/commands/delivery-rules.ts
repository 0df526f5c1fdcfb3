import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { Database } from '../../storage/database.js'

export interface DeliveryPolicy {
  ackTimeoutMs: number
  maxAttempts: number
  ttlMs: number
}

type Condition = (eb: ExpressionBuilder<Database, 'platform_commands'>) => Expression<SqlBool>

export interface DeliveryRules {
  /** Pending past the TTL, never delivered: the sweep expires them. */
  expired: Condition
  /** Not acked in time after the last of `maxAttempts` deliveries: the sweep fails them. */
  outOfAttempts: Condition
  /** What a poll hands out and a heartbeat counts: pending within the TTL, or not acked in time with attempts left. */
  due: Condition
}

/**
 * The queue's time rules at `now` (contract §7), each written once: `due` is what is neither
 * `expired` nor `outOfAttempts` among pending commands and deliveries whose ack is overdue.
 *
 * `now` is the database's clock in epoch milliseconds (`epochMillis`), evaluated by the
 * statement: `created_at` and `delivered_at` were written by whichever instance queued or
 * delivered the command, on that clock too. Time-outs count in whole milliseconds.
 */
export function deliveryRules({ ttlMs, ackTimeoutMs, maxAttempts }: DeliveryPolicy, now: Expression<number>): DeliveryRules {
  const before = (ms: number) => sql<number>`(${now} - ${Math.round(ms)})`
  const pending: Condition = (eb) => eb('status', '=', 'pending')
  const ackOverdue: Condition = (eb) => eb.and([eb('status', '=', 'delivered'), eb('delivered_at', '<=', before(ackTimeoutMs))])
  return {
    expired: (eb) => eb.and([pending(eb), eb('created_at', '<=', before(ttlMs))]),
    outOfAttempts: (eb) => eb.and([ackOverdue(eb), eb('attempts', '>=', maxAttempts)]),
    due: (eb) => eb.or([eb.and([pending(eb), eb('created_at', '>', before(ttlMs))]), eb.and([ackOverdue(eb), eb('attempts', '<', maxAttempts)])]),
  }
}
