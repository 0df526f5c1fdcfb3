import type { FastifyBaseLogger } from 'fastify'
import type { LinkRegistry } from '../../link/link-registry.js'
import type { DeviceLink } from '../../link/device-link.js'
import type { FirmwareOfferFrame } from '@fleetgate/device-agent/protocol'
import type { ActiveRelease } from '../../firmware/release-repository.js'
import type { RolloutMetrics } from './rollout-metrics.js'
import type { ChangedMachine, RolloutRepository, RolloutRow } from './rollout-repository.js'

/** What the offers need to know of a rollout's release. */
export type OfferedRelease = Pick<ActiveRelease, 'release_id' | 'image_version' | 'display_version' | 'size' | 'sha256' | 'crc32'>

export interface RolloutOffersDeps {
  repo: RolloutRepository
  registry: LinkRegistry
  instanceId: string
  aliveMs: number
  metrics: RolloutMetrics
  log: FastifyBaseLogger
  /** A machine's state changed (its `rollout-device` event). */
  changed: (rollout: RolloutRow, machine: ChangedMachine) => void
}

/** A waiting machine is tried again this long after a try that did not end in an offer (§14: at most 10 s). */
export const RETRY_SECONDS = 5
/** Task checks (and offers) under way at once on one instance. */
const MAX_CONCURRENT = 64
const TASK_CHECK_TIMEOUT_MS = 5000
/** Task states during which a machine is placing parts (§14): no offer then. */
const BUSY_TASK_STATES = new Set(['running', 'paused'])
/** The rollouts' identity in request frames: machines see who asks. */
const ROLLOUT_USER = { id: 'fleetgate-rollouts', username: 'fleetgate-rollouts', role: 'system' }

/**
 * Offers the release to the waiting machines whose links this instance holds, one machine at a
 * time per try: take the try in the database (so no other instance tries it too), ask the machine
 * for its task, and only when no task runs mark it offered (a compare-and-set that also checks the
 * rollout still runs) and send the offer on its link.
 */
export class RolloutOffers {
  private readonly trying = new Set<string>()

  constructor(private readonly deps: RolloutOffersDeps) {}

  /** Offers to the due machines linked here; `now` is the pass's time on the database's clock. */
  async offerDue(rollout: RolloutRow, release: OfferedRelease, now: number): Promise<void> {
    const room = MAX_CONCURRENT - this.trying.size
    if (room <= 0) return
    const due = await this.deps.repo.dueHere(rollout.rollout_id, this.deps.instanceId, now, room + this.trying.size)
    for (const deviceId of due) {
      if (this.trying.size >= MAX_CONCURRENT) break
      if (this.trying.has(deviceId)) continue
      const link = this.deps.registry.get(deviceId)
      // The hint in the devices table is stale (the link moved or closed): the holder will try it.
      if (!link || !link.isAlive(this.deps.aliveMs)) continue
      this.trying.add(deviceId)
      void this.tryOne(rollout, release, link, now)
        .catch((err: unknown) => this.deps.log.warn({ err, deviceId, rolloutId: rollout.rollout_id }, 'rollout offer failed'))
        .finally(() => this.trying.delete(deviceId))
    }
  }

  private async tryOne(rollout: RolloutRow, release: OfferedRelease, link: DeviceLink, now: number): Promise<void> {
    const { repo, metrics } = this.deps
    const id = rollout.rollout_id
    if (!(await repo.takeTry(id, link.deviceId, now, RETRY_SECONDS))) return
    const task = await this.taskOf(link)
    if (task !== 'free') {
      // Placing parts, or no answer (the machine is tried again later either way).
      metrics.busy.inc({ reason: task === 'placing' ? 'task' : 'no_answer' })
      return
    }
    const offered = await repo.markOffered(id, link.deviceId)
    if (!offered) return
    const frame: FirmwareOfferFrame = {
      type: 'firmware-offer',
      rollout_id: id,
      release_id: release.release_id,
      image_version: Number(release.image_version),
      display_version: release.display_version,
      size: Number(release.size),
      sha256: release.sha256,
      crc32: release.crc32,
      url: releaseImagePath(release.release_id),
    }
    metrics.offers.inc()
    this.deps.changed(rollout, offered)
    // A link lost here leaves the machine offered: it reports on its next link, or the step time-out fails it.
    await link.offerFirmware(frame).catch(() => undefined)
  }

  /**
   * What the machine says of its task: `placing` (running or paused, or an error answer), `free`
   * (none, or another state; a machine without tasks answers 404), or `no_answer` (time-out, lost link).
   */
  private async taskOf(link: DeviceLink): Promise<'placing' | 'free' | 'no_answer'> {
    try {
      const answer = await link.request({ method: 'GET', path: '/tasks/current', query: {}, body: null, user: ROLLOUT_USER }, TASK_CHECK_TIMEOUT_MS)
      if (answer.status === 404) return 'free'
      if (answer.status >= 300) return 'placing'
      const task = (answer.data as { task?: { state?: unknown } | null } | null)?.task
      return task !== null && task !== undefined && BUSY_TASK_STATES.has(String(task.state)) ? 'placing' : 'free'
    } catch {
      return 'no_answer'
    }
  }
}

/** Where a machine downloads a release's image (contract §14). */
export const releaseImagePath = (releaseId: string) => `/api/v1/firmware/slave/releases/${encodeURIComponent(releaseId)}/system.bin`
