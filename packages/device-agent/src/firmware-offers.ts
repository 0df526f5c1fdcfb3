import type { RequestOptions } from 'node:https'
import type { AgentLog } from './device-agent.js'
import type { FirmwareOffer, FirmwareOptions, FirmwareStatus } from './firmware-handler.js'
import { imageMismatches } from './image-mismatches.js'
import { ProgressThrottle } from './progress-throttle.js'
import { downloadResumable } from './resumable-download.js'

export interface FirmwareOffersContext {
  report(status: FirmwareStatus): void
  /** The HTTP URL of the offer's `url` path on the gateway. */
  imageUrl(path: string): string
  log: AgentLog
  /** Used when the options give none. */
  requestOptions: RequestOptions
}

type OfferStep = 'checking' | 'downloading' | 'installing'

interface OfferInProgress {
  offer: FirmwareOffer
  step: OfferStep
  abort: AbortController
}

/**
 * Takes firmware offers one at a time, in the background (requests keep being served): already
 * running → `installed`; busy → `busy`; else download (resumed after breaks), check size, sha256
 * and crc32, install, each step reported with its progress, any failure reported `failed`.
 */
export class FirmwareOffers {
  private current: OfferInProgress | undefined
  private readonly progressIntervalMs: number

  constructor(
    private readonly options: FirmwareOptions,
    private readonly context: FirmwareOffersContext,
  ) {
    this.progressIntervalMs = options.progressIntervalMs ?? 1000
  }

  /** The offer being taken, and its step. */
  get inProgress(): { offer: FirmwareOffer; step: OfferStep } | undefined {
    return this.current && { offer: this.current.offer, step: this.current.step }
  }

  /** Starts taking an offer and returns at once. */
  take(offer: FirmwareOffer): void {
    const current = this.current
    if (current?.offer.rollout_id === offer.rollout_id) {
      this.context.log('info', `firmware offer of rollout ${offer.rollout_id} ignored: already ${current.step}`)
      return
    }
    if (current) {
      this.context.log('info', `firmware offer of rollout ${offer.rollout_id} declined: rollout ${current.offer.rollout_id} is ${current.step}`)
      this.context.report({ rollout_id: offer.rollout_id, release_id: offer.release_id, state: 'busy' })
      return
    }
    const taking: OfferInProgress = { offer, step: 'checking', abort: new AbortController() }
    this.current = taking
    this.run(taking)
      .catch((err: Error) => this.context.log('error', `firmware offer of rollout ${offer.rollout_id}: ${err.message}`))
      .finally(() => {
        if (this.current === taking) this.current = undefined
      })
  }

  /** Abandons the offer in progress without reporting it (the agent is closing). An install already running finishes unreported. */
  stop(): void {
    this.current?.abort.abort()
    this.current = undefined
  }

  private async run(taking: OfferInProgress): Promise<void> {
    const { offer, abort } = taking
    const report = (state: FirmwareStatus['state'], extra: Pick<FirmwareStatus, 'progress' | 'error'> = {}) => {
      if (!abort.signal.aborted) this.context.report({ rollout_id: offer.rollout_id, release_id: offer.release_id, state, ...extra })
    }
    try {
      if (await this.runs(offer)) return report('installed')
      if (await this.busy()) return report('busy')
      taking.step = 'downloading'
      const image = await this.download(offer, abort.signal, (progress) => report('downloading', { progress }))
      const mismatches = imageMismatches(image, offer)
      if (mismatches.length > 0) throw new Error(`downloaded image does not match the offer: ${mismatches.join('; ')}`)
      taking.step = 'installing'
      const installing = new ProgressThrottle(this.progressIntervalMs, (progress) => report('installing', { progress }))
      installing.update(0)
      try {
        await this.options.handler.install(image, offer, (percent) => installing.update(percent))
      } finally {
        installing.stop()
      }
      report('installed')
    } catch (err) {
      if (abort.signal.aborted) return
      const message = err instanceof Error ? err.message : String(err)
      this.context.log('warn', `firmware offer of rollout ${offer.rollout_id} failed: ${message}`)
      report('failed', { error: message })
    }
  }

  private async download(offer: FirmwareOffer, signal: AbortSignal, progress: (percent: number) => void): Promise<Buffer> {
    const downloading = new ProgressThrottle(this.progressIntervalMs, progress)
    downloading.update(0)
    const image = await downloadResumable(this.context.imageUrl(offer.url), {
      expectedSize: offer.size,
      retries: this.options.downloadRetries,
      backoff: this.options.downloadBackoff,
      idleTimeoutMs: this.options.downloadIdleTimeoutMs,
      requestOptions: this.options.requestOptions ?? this.context.requestOptions,
      signal,
      onProgress: (received) => downloading.update((received * 100) / offer.size),
    })
    downloading.update(100)
    return image
  }

  /** Whether the machine already runs the offered image; a `current()` that throws counts as no. */
  private async runs(offer: FirmwareOffer): Promise<boolean> {
    let running
    try {
      running = await this.options.handler.current?.()
    } catch (err) {
      this.context.log('warn', `firmware handler current() failed: ${(err as Error).message}`)
      return false
    }
    if (!running) return false
    if (running.sha256 !== undefined) return running.sha256.toLowerCase() === offer.sha256.toLowerCase()
    return running.image_version !== undefined && running.image_version === offer.image_version
  }

  /** An `isBusy()` that throws counts as busy: when in doubt the machine is not disturbed. */
  private async busy(): Promise<boolean> {
    try {
      return Boolean(await this.options.handler.isBusy())
    } catch (err) {
      this.context.log('warn', `firmware handler isBusy() failed, answering busy: ${(err as Error).message}`)
      return true
    }
  }
}
