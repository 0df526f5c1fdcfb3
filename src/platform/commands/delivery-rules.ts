import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
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
 */
export function deliveryRules({ ttlMs, ackTimeoutMs, maxAttempts }: DeliveryPolicy, now: number): DeliveryRules {
  const expiredBy = now - ttlMs
  const pending: Condition = (eb) => eb('status', '=', 'pending')
  const ackOverdue: Condition = (eb) => eb.and([eb('status', '=', 'delivered'), eb('delivered_at', '<=', now - ackTimeoutMs)])
  return {
    expired: (eb) => eb.and([pending(eb), eb('created_at', '<=', expiredBy)]),
    outOfAttempts: (eb) => eb.and([ackOverdue(eb), eb('attempts', '>=', maxAttempts)]),
    due: (eb) => eb.or([eb.and([pending(eb), eb('created_at', '>', expiredBy)]), eb.and([ackOverdue(eb), eb('attempts', '<', maxAttempts)])]),
  }
}
