import type { FastifyBaseLogger } from 'fastify'
import { sql } from 'kysely'
import type { EventPublisher } from '../../events/event-bus.js'
import { PeriodicTask } from '../../lib/periodic-task.js'
import { nowSeconds } from '../../lib/time.js'
import type { DeviceLink } from '../../link/device-link.js'
import type { LinkRegistry } from '../../link/link-registry.js'
import type { Db, Storage } from '../../storage/storage.js'
import type { DeviceEvent } from './device-events.js'
import { byDeviceId } from './device-repository.js'

export interface InstancePresenceOptions {
  /** How often an instance records that it lives. */
  beatMs?: number
  /** An instance silent this long is presumed dead: its devices are no longer linked. */
  lostAfterMs?: number
}

export const PRESENCE_DEFAULTS: Required<InstancePresenceOptions> = { beatMs: 2000, lostAfterMs: 8000 }

const SWEEP_LOCK = 'fleetgate:lost-instances'
/**
 * Every this many sweeps (and the first), devices naming an instance that has no record at all
 * are unlinked too. The other sweeps look up only the devices of instances whose record went
 * silent (an indexed lookup of their devices), so an idle fleet is not scanned every 2 s.
 */
const FULL_SWEEP_EVERY = 30
/** Devices unlinked per statement by a sweep, and statements per sweep at most (the next sweep goes on). */
const SWEEP_BATCH = 1000
const MAX_SWEEP_BATCHES = 100
/** Links written back per statement after this instance finds itself swept. */
const REASSERT_BATCH = 1000

/**
 * Presence after a crash (§13): every instance records a sign of life in the database; one at a
 * time, an instance that has itself been recording for `lostAfterMs` (so a database outage that
 * silenced everybody is not mistaken for deaths) unlinks the devices of instances silent that
 * long and raises their `device` events. An instance that finds its own record swept (it was
 * silent, not dead) writes its links back and announces them again.
 */
export class InstancePresence {
  private readonly task: PeriodicTask
  private readonly db: Db
  private healthySince: number | undefined
  private beats = 0
  private sweeps = 0

  constructor(
    private readonly storage: Storage,
    private readonly instanceId: string,
    private readonly registry: LinkRegistry,
    private readonly events: EventPublisher<DeviceEvent>,
    private readonly announce: (link: DeviceLink) => void,
    private readonly log: FastifyBaseLogger,
    private readonly options: Required<InstancePresenceOptions> = PRESENCE_DEFAULTS,
  ) {
    this.db = storage.db
    this.task = new PeriodicTask(
      () => this.pass(),
      (err) => {
        this.healthySince = undefined
        log.warn({ err }, 'instance presence pass failed')
      },
    )
  }

  start(): void {
    this.task.start(this.options.beatMs, { immediately: true })
  }

  /** Stops beating and removes this instance's record (its links were closed by the shutdown). */
  async stop(): Promise<void> {
    await this.task.stop()
    await this.db.deleteFrom('instances').where('instance_id', '=', this.instanceId).execute().catch(() => undefined)
  }

  private async pass(): Promise<void> {
    // How long this instance has been beating is its own affair: its own clock.
    const now = nowSeconds()
    await this.beat()
    this.healthySince ??= now
    if ((now - this.healthySince) * 1000 >= this.options.lostAfterMs) await this.storage.exclusive(SWEEP_LOCK, () => this.sweep())
  }

  /** A sign of life on the database's clock: the sweeps of other instances compare it with that clock. */
  private async beat(): Promise<void> {
    const { now } = this.storage.clock
    const updated = await this.db.updateTable('instances').set({ last_seen: now }).where('instance_id', '=', this.instanceId).executeTakeFirst()
    if (updated.numUpdatedRows > 0n) return void this.beats++
    await this.db
      .insertInto('instances')
      .values({ instance_id: this.instanceId, started_at: now, last_seen: now })
      .onConflict((oc) => oc.column('instance_id').doUpdateSet({ last_seen: now }))
      .execute()
    if (this.beats++ > 0) await this.reassert()
  }

  /**
   * Our record was swept while we were silent: our links are ours again, where no newer link took
   * over. One statement per `REASSERT_BATCH` links: an instance silenced by load must not answer
   * with a statement per link (17,000 of them at fleet scale) on the database that was slow.
   */
  private async reassert(): Promise<void> {
    const links = this.registry.all().sort(byDeviceId)
    this.log.warn({ links: links.length }, 'this instance was presumed dead while silent; its links are recorded again')
    for (let i = 0; i < links.length; i += REASSERT_BATCH) {
      const chunk = new Map(links.slice(i, i + REASSERT_BATCH).map((link) => [link.deviceId, link]))
      // The casts give PostgreSQL the column types of untyped parameters; SQLite takes them as they are.
      const rows = [...chunk.values()].map((l) => sql`(${l.deviceId}, ${l.identity.linkId}, cast(${l.generation} as bigint))`)
      const written = await this.db
        .with('held(device_id, link_id, generation)', () => sql<{ device_id: string; link_id: string; generation: number }>`(values ${sql.join(rows)})`)
        .updateTable('devices')
        .from('held')
        .set((eb) => ({ link_instance: this.instanceId, link_id: eb.ref('held.link_id') }))
        .whereRef('devices.device_id', '=', 'held.device_id')
        .whereRef('devices.link_generation', '=', 'held.generation')
        .returning('devices.device_id')
        .execute()
      for (const { device_id } of written) this.announce(chunk.get(device_id)!)
    }
  }

  /**
   * Unlinks the devices of instances silent for `lostAfterMs`, with their `device` events, in
   * batches in device id order: the machines of the lost instance are re-linking elsewhere
   * meanwhile, and their claims lock rows in that order too. On PostgreSQL a row a claim holds
   * is skipped (the claim names its new holder; a row skipped for another reason is taken by the
   * next pass), so the sweep never waits on a claim, nor a claim long on the sweep.
   */
  private async sweep(): Promise<void> {
    const cutoff = await this.storage.clock.read(this.db) - this.options.lostAfterMs / 1000
    const full = this.sweeps++ % FULL_SWEEP_EVERY === 0
    // Usually no instance is silent: one look at the (small) instances table, nothing more.
    const silentInstances = full ? [] : (await this.db.selectFrom('instances').select('instance_id').where('last_seen', '<', cutoff).execute()).map((r) => r.instance_id)
    if (!full && silentInstances.length === 0) return
    const lost: { device_id: string; version: string; ip: string; last_heartbeat: number | null }[] = []
    for (let batch = 0; batch < MAX_SWEEP_BATCHES; batch++) {
      const swept = await this.db
        .updateTable('devices')
        .set({ link_instance: null, link_id: null })
        .where('device_id', 'in', (eb) =>
          eb
            .selectFrom('devices as silent')
            .select('silent.device_id')
            .where('silent.link_instance', 'is not', null)
            .where('silent.link_instance', '!=', this.instanceId)
            .where((w) =>
              full
                ? w('silent.link_instance', 'not in', w.selectFrom('instances').select('instance_id').where('last_seen', '>=', cutoff))
                : w('silent.link_instance', 'in', silentInstances),
            )
            .orderBy('silent.device_id')
            .limit(SWEEP_BATCH)
            .$if(this.storage.skipLocked, (q) => q.forUpdate().skipLocked()),
        )
        .returning(['device_id', 'version', 'ip', 'last_heartbeat'])
        .execute()
      lost.push(...swept)
      if (swept.length < SWEEP_BATCH) break
    }
    // A lost instance's record goes once no device names it (rows skipped above are swept next time).
    await this.db
      .deleteFrom('instances')
      .where('last_seen', '<', cutoff)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('devices').select('device_id').whereRef('devices.link_instance', '=', 'instances.instance_id'))))
      .execute()
    if (lost.length > 0) this.log.warn({ devices: lost.length }, 'devices of a silent instance are no longer linked')
    const at = nowSeconds()
    for (const device of lost) {
      this.events.publish({
        kind: 'device',
        data: {
          device_id: device.device_id,
          alive: false,
          registered: false,
          version: device.version,
          ip: device.ip,
          last_heartbeat: device.last_heartbeat === null ? null : Number(device.last_heartbeat),
          at,
          reason: 'instance_lost',
        },
      })
    }
  }
}
