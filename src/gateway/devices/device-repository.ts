import type { DeviceLink, LinkIdentity } from '../../link/device-link.js'
import { hashDeviceKey, verifyDeviceKey } from '../../auth/device-key-hash.js'
import { sameSecret } from '../../auth/secrets.js'
import type { AdmitVerdict, LinkClaim, LinkStore } from '../../link/link-store.js'
import type { RegisterFrame } from '@fleetgate/device-agent/protocol'
import { sql, type Selectable } from 'kysely'
import type { Database } from '../../storage/database.js'
import { type Db, type Storage, type Tx } from '../../storage/storage.js'
import type { DatabaseClock } from '../../storage/database-clock.js'
import { nowSeconds } from '../../lib/time.js'
import { pageOf } from '../../storage/paging.js'
import { boundTo } from './binding-repository.js'
import { MultiRowInsert } from '../../storage/multi-row-insert.js'
import type { DevicesCondition } from '../labels/selector/selector-sql.js'

const COLUMNS = ['device_id', 'hostname', 'ip', 'version', 'last_status', 'connect_time', 'last_heartbeat', 'link_instance', 'rated_cph'] as const

/** Device ids per generations query (bound parameters stay well under every engine's limit). */
const GENERATION_BATCH = 500
/** Links per heartbeat or claim statement: 4 and 7 parameters each, far below SQLite's 32,766 and PostgreSQL's 65,535. */
const STATUS_BATCH = 1000
/** New devices per insert: 7 parameters each. */
const INSERT_BATCH = 1000

/**
 * Batched writes list their rows in device id order: two statements updating some of the same
 * rows then take their row locks in the same order and wait for each other instead of deadlocking.
 */
const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
export const byDeviceId = (a: { deviceId: string }, b: { deviceId: string }) => compareIds(a.deviceId, b.deviceId)

/** A link's latest heartbeat, as the heartbeat UPDATE's values row takes it. */
interface StatusRow {
  device_id: string
  link_id: string
  heartbeat: number
  status: string
}
const STATUS_COLUMNS = ['device_id', 'link_id', 'heartbeat', 'status'] as const satisfies readonly (keyof StatusRow)[]

const chunks = <T>(items: readonly T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, k) => items.slice(k * size, (k + 1) * size))

/** Positions grouped so no group holds a key twice: the first occurrence of each key, then the second, and so on. */
function occurrenceRounds(keys: readonly string[]): number[][] {
  const seen = new Map<string, number>()
  const rounds: number[][] = []
  keys.forEach((key, i) => {
    const n = seen.get(key) ?? 0
    seen.set(key, n + 1)
    ;(rounds[n] ??= []).push(i)
  })
  return rounds
}

const newDeviceRow = (frame: RegisterFrame) => ({
  device_id: frame.device_id,
  hostname: frame.hostname,
  ip: frame.ip ?? '',
  version: frame.version,
  key_hash: hashDeviceKey(frame.key),
  last_status: '{}',
  created_at: nowSeconds(),
})

export type DeviceRow = Pick<Selectable<Database['devices']>, (typeof COLUMNS)[number]>

export interface DevicePageQuery {
  limit: number
  after?: string
  /** Only devices bound to this user (non-administrators). */
  boundTo?: string
  /** Only devices the registry believes linked (a hint; live state decides). */
  linkedOnly?: boolean
  /** Only devices whose id starts with this (byte for byte). */
  prefix?: string
  /** Only devices meeting this condition (a compiled selector, §15). */
  condition?: DevicesCondition
}

/**
 * Every id that starts with `prefix` sorts (byte order) from `prefix` up to, not including,
 * `prefix + '~'`: '~' (0x7E) is above every character an id may hold (§2: `A–Z a–z 0–9 . _ : -`,
 * at most 'z', 0x7A). A range, not LIKE: SQLite's LIKE ignores case, and a range uses the key.
 */
export const prefixRange = (prefix: string): [string, string] => [prefix, `${prefix}~`]

/** The device registry: records that persist across restarts, and the link bookkeeping. */
export class DeviceRepository implements LinkStore {
  private readonly db: Db
  private readonly clock: DatabaseClock
  /** The heartbeat UPDATE, its text built once per row count (see `saveStatus`). */
  private readonly statusUpdate: MultiRowInsert<StatusRow>

  constructor(private readonly storage: Pick<Storage, 'db' | 'clock' | 'bounded'>) {
    this.db = storage.db
    this.clock = storage.clock
    this.statusUpdate = new MultiRowInsert<StatusRow>(
      STATUS_COLUMNS,
      (rows) =>
        this.db
          .with('beat(device_id, link_id, heartbeat, status)', () => sql<StatusRow>`(values ${sql.join(rows.map((r) => sql`(${sql.join(STATUS_COLUMNS.map((c) => r[c]))})`))})`)
          .updateTable('devices')
          .from('beat')
          // The values are untyped parameters (text on PostgreSQL): the heartbeat is cast where it is stored.
          .set((eb) => ({ last_heartbeat: eb.cast('beat.heartbeat', 'double precision'), last_status: eb.ref('beat.status') }))
          .whereRef('devices.device_id', '=', 'beat.device_id')
          .whereRef('devices.link_id', '=', 'beat.link_id'),
      STATUS_BATCH,
    )
  }

  /**
   * A batch costs one read of the keys and one insert of the ids never seen. The rare cases (a
   * key reset by an administrator, an id recorded by another connection meanwhile, the same new
   * id twice in the batch) take the one-by-one path after it.
   */
  async admitAll(frames: readonly RegisterFrame[], enrollToken: string | undefined): Promise<AdmitVerdict[]> {
    const stored = await this.keyHashes(frames.map((f) => f.device_id))
    const verdicts = new Array<AdmitVerdict | undefined>(frames.length)
    const newIds = new Map<string, number>()
    frames.forEach((frame, i) => {
      const id = frame.device_id
      const keyHash = stored.get(id)
      if (keyHash) verdicts[i] = verifyDeviceKey(frame.key, keyHash) ? 'accepted' : 'wrong_key'
      else if (keyHash === undefined && enrollToken !== undefined && !sameSecret(frame.enroll_token, enrollToken)) verdicts[i] = 'enroll_refused'
      else if (keyHash === undefined && !newIds.has(id)) newIds.set(id, i)
    })
    for (const chunk of chunks([...newIds.values()], INSERT_BATCH)) {
      const inserted = await this.db
        .insertInto('devices')
        .values(chunk.map((i) => newDeviceRow(frames[i]!)))
        .onConflict((oc) => oc.column('device_id').doNothing())
        .returning('device_id')
        .execute()
      const ids = new Set(inserted.map((row) => row.device_id))
      for (const i of chunk) if (ids.has(frames[i]!.device_id)) verdicts[i] = 'accepted'
    }
    for (let i = 0; i < frames.length; i++) verdicts[i] ??= await this.admit(frames[i]!, enrollToken)
    return verdicts as AdmitVerdict[]
  }

  async admit(frame: RegisterFrame, enrollToken: string | undefined): Promise<AdmitVerdict> {
    for (;;) {
      const row = await this.db.selectFrom('devices').select('key_hash').where('device_id', '=', frame.device_id).executeTakeFirst()
      if (row?.key_hash) return verifyDeviceKey(frame.key, row.key_hash) ? 'accepted' : 'wrong_key'
      if (row) {
        // An administrator reset the key: the next key presented is trusted, once it comes with
        // the enroll token when one is set (contract §17: a reset id enrolls again).
        if (enrollToken !== undefined && !sameSecret(frame.enroll_token, enrollToken)) return 'enroll_refused'
        const reset = await this.db
          .updateTable('devices')
          .set({ key_hash: hashDeviceKey(frame.key) })
          .where('device_id', '=', frame.device_id)
          .where('key_hash', 'is', null)
          .executeTakeFirst()
        if (Number(reset.numUpdatedRows) === 1) return 'accepted'
        continue
      }
      if (enrollToken !== undefined && !sameSecret(frame.enroll_token, enrollToken)) return 'enroll_refused'
      const inserted = await this.db
        .insertInto('devices')
        .values(newDeviceRow(frame))
        .onConflict((oc) => oc.column('device_id').doNothing())
        .executeTakeFirst()
      if (Number(inserted.numInsertedOrUpdatedRows) === 1) return 'accepted'
      // Another connection recorded the id first: check against its key.
    }
  }

  /** The stored key hash of each known id (null: reset by an administrator). */
  private async keyHashes(deviceIds: readonly string[]): Promise<Map<string, string | null>> {
    const result = new Map<string, string | null>()
    for (const chunk of chunks([...new Set(deviceIds)], GENERATION_BATCH)) {
      const rows = await this.db.selectFrom('devices').select(['device_id', 'key_hash']).where('device_id', 'in', chunk).execute()
      for (const row of rows) result.set(row.device_id, row.key_hash)
    }
    return result
  }

  /**
   * One UPDATE … FROM (VALUES …) per `STATUS_BATCH` claims. A device twice in one statement
   * would be updated once, so its later claims go in later statements, in order.
   */
  async claimAll(claims: readonly LinkClaim[], instanceId: string, deadline = Infinity): Promise<(number | undefined)[]> {
    const generations = new Array<number | undefined>(claims.length)
    for (const round of occurrenceRounds(claims.map((c) => c.identity.deviceId))) {
      for (const chunk of chunks(round, STATUS_BATCH)) {
        const rows = [...chunk].sort((a, b) => compareIds(claims[a]!.identity.deviceId, claims[b]!.identity.deviceId)).map((i) => {
          const { identity, connectTime } = claims[i]!
          return sql`(${identity.deviceId}, ${identity.hostname}, ${identity.ip}, ${identity.version}, cast(${connectTime} as double precision), ${identity.linkId}, cast(${identity.ratedCph ?? null} as integer))`
        })
        const claimed = await this.beforeDeadline(deadline, (db) =>
          db
            .with('claim(device_id, hostname, ip, version, connect_time, link_id, rated_cph)', () =>
              sql<{ device_id: string; hostname: string; ip: string; version: string; connect_time: number; link_id: string; rated_cph: number | null }>`(values ${sql.join(rows)})`,
            )
            .updateTable('devices')
            .from('claim')
            .set((eb) => ({
              hostname: eb.ref('claim.hostname'),
              ip: eb.ref('claim.ip'),
              version: eb.ref('claim.version'),
              connect_time: eb.ref('claim.connect_time'),
              link_instance: instanceId,
              link_id: eb.ref('claim.link_id'),
              // What the latest register frame says (§16), null when it named none.
              rated_cph: eb.ref('claim.rated_cph'),
              link_generation: eb('devices.link_generation', '+', 1),
              link_claimed_at: this.clock.now,
            }))
            .whereRef('devices.device_id', '=', 'claim.device_id')
            .returning(['devices.device_id', 'devices.link_generation'])
            .execute(),
        )
        const byId = new Map(claimed.map((row) => [row.device_id, Number(row.link_generation)]))
        for (const i of chunk) generations[i] = byId.get(claims[i]!.identity.deviceId)
      }
    }
    return generations
  }

  /**
   * Runs a write that must commit before `deadline` (`performance.now()` ms) or not at all: a
   * claim its registration gave up on must not bump the generation later and fence a live link.
   */
  private beforeDeadline<T>(deadline: number, write: (db: Db) => Promise<T>): Promise<T> {
    if (deadline === Infinity) return write(this.db)
    const left = deadline - performance.now()
    if (left <= 0) return Promise.reject(new Error('the claim was given up before it was written'))
    return this.storage.bounded(left, write)
  }

  async claim(identity: LinkIdentity, connectTime: number, instanceId: string): Promise<number | undefined> {
    return (await this.claimAll([{ identity, connectTime }], instanceId))[0]
  }

  async generations(deviceIds: readonly string[]): Promise<Map<string, number>> {
    const result = new Map<string, number>()
    for (const chunk of chunks([...new Set(deviceIds)], GENERATION_BATCH)) {
      const rows = await this.db.selectFrom('devices').select(['device_id', 'link_generation']).where('device_id', 'in', chunk).execute()
      for (const row of rows) result.set(row.device_id, Number(row.link_generation))
    }
    return result
  }

  async claimedWithin(seconds: number, holder: string): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('devices')
      .select(['device_id', 'link_generation'])
      .where('link_claimed_at', '>=', this.clock.shifted(-seconds))
      // A record whose link was closed since names no holder: it is read too.
      .where((eb) => eb.or([eb('link_instance', 'is', null), eb('link_instance', '<>', holder)]))
      .execute()
    return new Map(rows.map((row) => [row.device_id, Number(row.link_generation)]))
  }

  /**
   * One UPDATE … FROM (VALUES …) per `STATUS_BATCH` links, not one per link: a fleet
   * heartbeating every 20 s would otherwise cost the database a statement per heartbeat. A row
   * is written only while its link still holds the record (`link_id`), as a single write was.
   * Each link is read once into a row and the rows are sorted, not the links; the text comes
   * from `statusUpdate`. Sorting some 4,000 links by `link.deviceId` (three pointers per side of
   * each comparison, across the heap) and a Kysely node tree per row cost about 20 µs a
   * heartbeat in CPU profiles of `bench -- fleet`, 1.6–2.7 times the heartbeats' own handling,
   * in synchronous stretches of tens of milliseconds (README, issue #36, twelfth VM).
   */
  async saveStatus(links: readonly DeviceLink[]): Promise<void> {
    const rows: StatusRow[] = []
    for (const link of links) {
      const heartbeat = link.lastHeartbeat
      if (heartbeat !== null) rows.push({ device_id: link.deviceId, link_id: link.identity.linkId, heartbeat, status: JSON.stringify(link.lastStatus) })
    }
    rows.sort((a, b) => compareIds(a.device_id, b.device_id))
    for (const statement of this.statusUpdate.statements(rows)) await this.db.executeQuery(statement)
  }

  /**
   * Writes each closed link's last heartbeat and clears the holder, one statement per
   * `STATUS_BATCH` links (an instance shutting down closes all of its links at once); a row is
   * written only while the closed link still holds it.
   */
  async linksClosed(links: readonly DeviceLink[]): Promise<void> {
    for (const chunk of chunks([...links].sort(byDeviceId), STATUS_BATCH)) {
      const rows = chunk.map((l) => {
        const status = l.lastHeartbeat === null ? null : JSON.stringify(l.lastStatus)
        return sql`(${l.deviceId}, ${l.identity.linkId}, cast(${l.lastHeartbeat} as double precision), cast(${status} as text))`
      })
      await this.db
        .with('gone(device_id, link_id, heartbeat, status)', () => sql<{ device_id: string; link_id: string; heartbeat: number | null; status: string | null }>`(values ${sql.join(rows)})`)
        .updateTable('devices')
        .from('gone')
        .set((eb) => ({
          last_heartbeat: eb.fn.coalesce('gone.heartbeat', 'devices.last_heartbeat'),
          last_status: eb.fn.coalesce('gone.status', 'devices.last_status'),
          link_instance: null,
          link_id: null,
        }))
        .whereRef('devices.device_id', '=', 'gone.device_id')
        .whereRef('devices.link_id', '=', 'gone.link_id')
        .execute()
    }
  }

  /** The instances that record signs of life (see instance-presence.ts): those that may hold links. */
  async liveInstances(): Promise<string[]> {
    return (await this.db.selectFrom('instances').select('instance_id').execute()).map((r) => r.instance_id)
  }

  /** Which of `deviceIds` are known machines; every known id when none are given. */
  async knownIds(deviceIds?: readonly string[]): Promise<Set<string>> {
    const known = new Set<string>()
    if (deviceIds === undefined) {
      for (const row of await this.db.selectFrom('devices').select('device_id').execute()) known.add(row.device_id)
      return known
    }
    for (let i = 0; i < deviceIds.length; i += 1000) {
      const chunk = deviceIds.slice(i, i + 1000)
      for (const row of await this.db.selectFrom('devices').select('device_id').where('device_id', 'in', chunk).execute()) known.add(row.device_id)
    }
    return known
  }

  async find(deviceId: string): Promise<DeviceRow | undefined> {
    return this.db.selectFrom('devices').select(COLUMNS).where('device_id', '=', deviceId).executeTakeFirst()
  }

  /** One page sorted by device id (byte order), plus whether more follow. */
  async page(q: DevicePageQuery): Promise<{ rows: DeviceRow[]; more: boolean }> {
    let query = this.filtered(q)
      .select(COLUMNS.map((c) => `devices.${c}` as const))
      .orderBy('devices.device_id')
      .limit(q.limit + 1)
    if (q.after !== undefined) query = query.where('devices.device_id', '>', q.after)
    const rows = await query.execute()
    return pageOf(rows, q.limit)
  }

  /** Ids of the devices meeting `condition`, in id order, at most `limit`. */
  async idsWhere(condition: DevicesCondition, limit: number): Promise<string[]> {
    const rows = await this.db.selectFrom('devices').select('devices.device_id').where(condition).orderBy('devices.device_id').limit(limit).execute()
    return rows.map((row) => row.device_id)
  }

  /** How many devices match (no cursor, no limit). */
  async count(q: Omit<DevicePageQuery, 'limit' | 'after'>): Promise<number> {
    const row = await this.filtered(q)
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  private filtered(q: Omit<DevicePageQuery, 'limit' | 'after'>) {
    let query = this.db.selectFrom('devices')
    if (q.prefix !== undefined) {
      const [from, below] = prefixRange(q.prefix)
      query = query.where('devices.device_id', '>=', from).where('devices.device_id', '<', below)
    }
    if (q.linkedOnly) query = query.where('devices.link_instance', 'is not', null)
    if (q.condition) query = query.where(q.condition)
    if (q.boundTo !== undefined) query = query.where(boundTo(q.boundTo, 'devices.device_id'))
    return query
  }

  /**
   * Removes the record, its key and its bindings; false when unknown, else the usernames it was
   * bound to. `alongside` runs in the same transaction (the audit record): all is stored, or nothing.
   */
  async forget(deviceId: string, alongside: (tx: Tx, forgotten: boolean) => Promise<void> = async () => {}): Promise<false | { unbound: string[] }> {
    return this.db.transaction().execute(async (trx) => {
      const unbound = await trx.deleteFrom('user_device_bindings').where('device_id', '=', deviceId).returning('username').execute()
      const deleted = await trx.deleteFrom('devices').where('device_id', '=', deviceId).executeTakeFirst()
      const forgotten = Number(deleted.numDeletedRows) === 1
      await alongside(trx, forgotten)
      return forgotten && { unbound: unbound.map((b) => b.username) }
    })
  }

  /** Forgets the key: the next registration's key is trusted. False when unknown. `alongside`: as for `forget`. */
  async resetKey(deviceId: string, alongside: (tx: Tx, reset: boolean) => Promise<void> = async () => {}): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable('devices').set({ key_hash: null }).where('device_id', '=', deviceId).executeTakeFirst()
      const reset = Number(updated.numUpdatedRows) === 1
      await alongside(trx, reset)
      return reset
    })
  }
}
