import { sql } from 'kysely'
import type { DevicesCondition } from './selector/selector-sql.js'
import { badRequest } from '../../errors.js'
import { inIdList } from '../../storage/id-list.js'
import type { Db, Storage } from '../../storage/storage.js'
import { inTransaction } from '../../storage/transaction.js'
import { boundTo as boundToUser } from '../devices/binding-repository.js'
import { MAX_LABELS } from './label-rules.js'

export type Labels = Record<string, string>
/** A merge: a value sets the key, `null` removes it. */
export type LabelChanges = Record<string, string | null>

/** Machines one bulk change may touch (§15): more → 400, nothing changed. */
export const MAX_BULK_MACHINES = 100_000
/** Values listed per key by `GET /api/v1/devices/labels`, most used first. */
const MAX_VALUES_PER_KEY = 100

export type BulkTarget = { condition: DevicesCondition } | { ids: readonly string[] }
export interface BulkChange {
  set: Labels
  remove: readonly string[]
}
export interface BulkResult {
  matched: number
  changed: number
}
export interface LabelKey {
  key: string
  values: { value: string; devices: number }[]
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const sortedLabels = (entries: Iterable<[string, string]>): Labels => Object.fromEntries([...entries].sort(([a], [b]) => byKey(a, b)))

/**
 * Labels of gateway machines (§15): a row per label in `device_labels`. Every change runs in one
 * transaction with what the caller adds (`alongside`: the audit record), and a change that would
 * leave a machine with more than 32 labels changes nothing.
 */
export class LabelRepository {
  private readonly db: Db

  constructor(private readonly storage: Pick<Storage, 'db' | 'dialect'>) {
    this.db = storage.db
  }

  /** The labels of each of `deviceIds` (`{}` for a machine without any), keys in byte order. */
  async labelsOf(deviceIds: readonly string[], db: Db = this.db): Promise<Map<string, Labels>> {
    const found = new Map<string, [string, string][]>(deviceIds.map((id) => [id, []]))
    if (deviceIds.length === 0) return new Map()
    const rows =
      deviceIds.length === 1
        ? await db.selectFrom('device_labels').select(['device_id', 'key', 'value']).where('device_id', '=', deviceIds[0]!).execute()
        : await db.selectFrom('device_labels').select(['device_id', 'key', 'value']).where(inIdList(this.storage.dialect, 'device_labels.device_id', deviceIds)).execute()
    for (const row of rows) found.get(row.device_id)?.push([row.key, row.value])
    return new Map([...found].map(([id, entries]) => [id, sortedLabels(entries)]))
  }

  /** Replaces every label of the machine; undefined when it is unknown. */
  async replace(deviceId: string, labels: Labels, alongside: (tx: Db) => Promise<void>): Promise<Labels | undefined> {
    return inTransaction(this.db, async (tx) => {
      if (!(await this.lockMachine(tx, deviceId))) return undefined
      await tx.deleteFrom('device_labels').where('device_id', '=', deviceId).execute()
      const entries = Object.entries(labels)
      if (entries.length > 0) await tx.insertInto('device_labels').values(entries.map(([key, value]) => ({ device_id: deviceId, key, value }))).execute()
      await alongside(tx)
      return sortedLabels(entries)
    })
  }

  /** Sets the keys given a value and removes those given `null`; undefined when the machine is unknown. */
  async merge(deviceId: string, changes: LabelChanges, alongside: (tx: Db) => Promise<void>): Promise<Labels | undefined> {
    return inTransaction(this.db, async (tx) => {
      if (!(await this.lockMachine(tx, deviceId))) return undefined
      const removed = Object.keys(changes).filter((key) => changes[key] === null)
      if (removed.length > 0) await tx.deleteFrom('device_labels').where('device_id', '=', deviceId).where('key', 'in', removed).execute()
      const set = Object.entries(changes).filter((entry): entry is [string, string] => entry[1] !== null)
      if (set.length > 0) {
        await tx
          .insertInto('device_labels')
          .values(set.map(([key, value]) => ({ device_id: deviceId, key, value })))
          .onConflict((oc) => oc.columns(['device_id', 'key']).doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
          .execute()
      }
      const labels = (await this.labelsOf([deviceId], tx)).get(deviceId)!
      if (Object.keys(labels).length > MAX_LABELS) throw tooManyLabels(deviceId)
      await alongside(tx)
      return labels
    })
  }

  /**
   * Sets and removes labels on every machine of `target` in one transaction (two statements
   * whatever the number of machines). `changed` counts the machines whose labels differ afterwards.
   */
  async bulk(target: BulkTarget, change: BulkChange, alongside: (tx: Db, result: BulkResult) => Promise<void>): Promise<BulkResult> {
    return inTransaction(this.db, async (tx) => {
      const where = this.targetCondition(target)
      const counted = await tx
        .selectFrom('devices')
        .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
        .where(where)
        .executeTakeFirstOrThrow()
      const matched = Number(counted.n)
      if (matched > MAX_BULK_MACHINES) throw badRequest(`The change would touch ${matched} machines; at most ${MAX_BULK_MACHINES} at once`, { matched })
      const changedIds = new Set<string>()
      if (change.remove.length > 0) {
        const removed = await tx
          .deleteFrom('device_labels')
          .where('key', 'in', [...change.remove])
          .where((eb) => eb('device_id', 'in', eb.selectFrom('devices').select('devices.device_id').where(where)))
          .returning('device_id')
          .execute()
        for (const row of removed) changedIds.add(row.device_id)
      }
      for (const [key, value] of Object.entries(change.set)) {
        const written = await tx
          .insertInto('device_labels')
          .columns(['device_id', 'key', 'value'])
          .expression((eb) => eb.selectFrom('devices').select(['devices.device_id', sql<string>`${key}`.as('key'), sql<string>`${value}`.as('value')]).where(where))
          .onConflict((oc) =>
            oc
              .columns(['device_id', 'key'])
              .doUpdateSet({ value: (eb) => eb.ref('excluded.value') })
              .where((eb) => eb('device_labels.value', '<>', eb.ref('excluded.value'))),
          )
          .returning('device_id')
          .execute()
        for (const row of written) changedIds.add(row.device_id)
      }
      if (Object.keys(change.set).length > 0) {
        const crowded = await tx
          .selectFrom('device_labels')
          .select('device_id')
          .where(inIdList(this.storage.dialect, 'device_labels.device_id', [...changedIds]))
          .groupBy('device_id')
          .having((eb) => eb.fn.countAll(), '>', MAX_LABELS)
          .limit(1)
          .executeTakeFirst()
        if (crowded) throw tooManyLabels(crowded.device_id)
      }
      const result = { matched, changed: changedIds.size }
      await alongside(tx, result)
      return result
    })
  }

  /** Every key over the machines (those bound to `boundTo` when given), each with its most used values. */
  async keys(boundTo?: string): Promise<LabelKey[]> {
    let query = this.db
      .selectFrom('device_labels')
      .select(['device_labels.key', 'device_labels.value', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
      .groupBy(['device_labels.key', 'device_labels.value'])
    if (boundTo !== undefined) query = query.where(boundToUser(boundTo, 'device_labels.device_id'))
    const keys = new Map<string, { value: string; devices: number }[]>()
    for (const row of await query.execute()) {
      const values = keys.get(row.key) ?? []
      values.push({ value: row.value, devices: Number(row.n) })
      keys.set(row.key, values)
    }
    return [...keys]
      .sort(([a], [b]) => byKey(a, b))
      .map(([key, values]) => ({ key, values: values.sort((a, b) => b.devices - a.devices || byKey(a.value, b.value)).slice(0, MAX_VALUES_PER_KEY) }))
  }

  private targetCondition(target: BulkTarget): DevicesCondition {
    if ('condition' in target) return target.condition
    const ids = target.ids
    return () => inIdList(this.storage.dialect, 'devices.device_id', ids)
  }

  /** Whether the machine exists; on PostgreSQL its row stays locked to the end of the transaction, so concurrent changes of one machine's labels queue. */
  private async lockMachine(tx: Db, deviceId: string): Promise<boolean> {
    let query = tx.selectFrom('devices').select('device_id').where('device_id', '=', deviceId)
    if (this.storage.dialect === 'postgres') query = query.forUpdate()
    return (await query.executeTakeFirst()) !== undefined
  }
}

const tooManyLabels = (deviceId: string) => badRequest(`Machine ${deviceId} would carry more than ${MAX_LABELS} labels`, { device_id: deviceId })
