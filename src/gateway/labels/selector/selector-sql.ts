import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Database } from '../../../storage/database.js'
import type { Dialect } from '../../../storage/storage.js'
import { reportedFirmwareSql } from './reported-firmware.js'
import type { Operator, Requirement, Selector } from './selector-syntax.js'

export interface SelectorSqlOptions {
  readonly dialect: Dialect
  /**
   * Seconds since the epoch (a number, or an SQL expression such as the database clock's
   * `shifted(-seconds)`). In SQL, `@online` is "linked (`link_instance` set) and a heartbeat
   * or a registration stored at or after `aliveSince`": the caller passes now − DEVICE_ALIVE_SECONDS.
   */
  readonly aliveSince: number | Expression<number>
}

export type DevicesCondition = (eb: ExpressionBuilder<Database, 'devices'>) => Expression<SqlBool>

/**
 * The selector as one boolean SQL condition on a query from `devices`, for `.where(...)`: the
 * database filters the fleet, nothing is loaded to test it. The condition is never NULL, so it
 * may also be negated. `selectorMatches` over `storedMachine` is its in-memory twin.
 *
 * A label requirement is an EXISTS or NOT EXISTS probe of the machine's labels by primary key
 * (device, key): `!=` and `notin` are NOT EXISTS of the match, and so hold for a machine without
 * the key. A probe per machine lets a page stop after its first matches (an `IN (…)` of the
 * label index's machines made SQLite build the whole set first: 450 ms for the first page of
 * 100,000 machines instead of 8 ms; `npm run bench -- labels`).
 */
export function selectorCondition(selector: Pick<Selector, 'requirements'>, options: SelectorSqlOptions): DevicesCondition {
  return (eb) => eb.and(selector.requirements.map((requirement) => requirementCondition(eb, requirement, options)))
}

type Eb = ExpressionBuilder<Database, 'devices'>

const always = (eb: Eb) => eb.and([])
const never = (eb: Eb) => eb.or([])

function requirementCondition(eb: Eb, requirement: Requirement, options: SelectorSqlOptions): Expression<SqlBool> {
  const { subject, op, values } = requirement
  if ('label' in subject) return labelCondition(eb, subject.label, op, values)
  switch (subject.field) {
    case 'version':
      return valueCondition(eb, eb.ref('devices.version'), undefined, op, values)
    case 'firmware': {
      const firmware = reportedFirmwareSql(options.dialect)
      return valueCondition(eb, firmware, eb(firmware, 'is not', null), op, values)
    }
    case 'online':
      return onlineCondition(eb, op, values, options.aliveSince)
  }
}

function labelCondition(eb: Eb, key: string, op: Operator, values: readonly string[]): Expression<SqlBool> {
  const labelled = (matching?: readonly string[]) => {
    let probe = eb
      .selectFrom('device_labels')
      .select('device_labels.key')
      .whereRef('device_labels.device_id', '=', 'devices.device_id')
      .where('device_labels.key', '=', key)
    if (matching) probe = matching.length === 1 ? probe.where('device_labels.value', '=', matching[0]!) : probe.where('device_labels.value', 'in', matching)
    return eb.exists(probe)
  }
  switch (op) {
    case 'eq':
    case 'in':
      return labelled(values)
    case 'neq':
    case 'notin':
      return eb.not(labelled(values))
    case 'exists':
      return labelled()
    case 'absent':
      return eb.not(labelled())
  }
}

/** A reported value; `present` is undefined when it always is (a NOT NULL column). */
function valueCondition(eb: Eb, value: Expression<string | null>, present: Expression<SqlBool> | undefined, op: Operator, values: readonly string[]): Expression<SqlBool> {
  const among = () => (values.length === 1 ? eb(value, '=', values[0]!) : eb(value, 'in', values))
  const notAmong = () => (values.length === 1 ? eb(value, '<>', values[0]!) : eb(value, 'not in', values))
  switch (op) {
    case 'eq':
    case 'in':
      return present ? eb.and([present, among()]) : among()
    case 'neq':
    case 'notin':
      return present ? eb.or([eb.not(present), notAmong()]) : notAmong()
    case 'exists':
      return present ?? always(eb)
    case 'absent':
      return present ? eb.not(present) : never(eb)
  }
}

/** `@online`: which of `true`/`false` the requirement accepts decides between online, offline, any or none. */
function onlineCondition(eb: Eb, op: Operator, values: readonly string[], aliveSince: number | Expression<number>): Expression<SqlBool> {
  const named: readonly string[] = op === 'exists' ? ['true', 'false'] : op === 'absent' ? [] : values
  const negated = op === 'neq' || op === 'notin'
  const acceptsTrue = named.includes('true') !== negated
  const acceptsFalse = named.includes('false') !== negated
  const heardSince = (column: 'devices.last_heartbeat' | 'devices.connect_time') => eb.and([eb(column, 'is not', null), eb(column, '>=', aliveSince)])
  const online = eb.and([eb('devices.link_instance', 'is not', null), eb.or([heardSince('devices.last_heartbeat'), heardSince('devices.connect_time')])])
  if (acceptsTrue && acceptsFalse) return always(eb)
  if (acceptsTrue) return online
  if (acceptsFalse) return eb.not(online)
  return never(eb)
}
