import { TypeCompiler } from '@sinclair/typebox/compiler'
import { FirmwareStatusFrame } from './protocol/frames.js'
import type { FirmwareStatus } from './firmware-handler.js'

const checkStatus = TypeCompiler.Compile(FirmwareStatusFrame)
const MAX_ERROR_CHARS = 1024
/** Rollouts whose unsent status is kept; the oldest is dropped beyond. */
const MAX_KEPT = 16

/**
 * A status as the gateway accepts it (a malformed one would close the link with 4400): `error`
 * cut to 1024 characters, `progress` a whole number in 0–100. Throws TypeError on bad ids or state.
 */
export function firmwareStatusFrame(status: FirmwareStatus): FirmwareStatusFrame {
  const { rollout_id, release_id, state, progress, error } = status
  const frame: FirmwareStatusFrame = {
    type: 'firmware-status',
    rollout_id,
    release_id,
    state,
    ...(progress !== undefined && Number.isFinite(progress) && { progress: Math.min(100, Math.max(0, Math.floor(progress))) }),
    ...(error !== undefined && { error: truncate(String(error), MAX_ERROR_CHARS) }),
  }
  if (!checkStatus.Check(frame)) {
    const first = checkStatus.Errors(frame).First()
    throw new TypeError(`invalid firmware status: ${first?.path.slice(1)}: ${first?.message}`)
  }
  return frame
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max
  return text.slice(0, end)
}

/**
 * Firmware statuses on their way to the gateway: sent at once when the link can carry them, else
 * the latest of each rollout is kept (`busy` excepted: the gateway asks again anyway) until `flush`
 * on the next link. An install that ends while the link is down is thus still reported.
 */
export class FirmwareStatusOutbox {
  private readonly kept = new Map<string, FirmwareStatusFrame>()

  constructor(private readonly trySend: (frame: FirmwareStatusFrame) => boolean) {}

  /** Whether the frame went out now. */
  report(frame: FirmwareStatusFrame): boolean {
    this.kept.delete(frame.rollout_id)
    if (this.trySend(frame)) return true
    if (frame.state === 'busy') return false
    this.kept.set(frame.rollout_id, frame)
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!)
    return false
  }

  /** Sends what was kept, oldest rollout first, stopping at the first frame that cannot go out. */
  flush(): void {
    for (const [rolloutId, frame] of this.kept) {
      if (!this.trySend(frame)) return
      this.kept.delete(rolloutId)
    }
  }

  get size(): number {
    return this.kept.size
  }
}
