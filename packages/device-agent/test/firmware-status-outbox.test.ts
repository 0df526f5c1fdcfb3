import { describe, expect, it } from 'vitest'
import type { FirmwareStatusFrame } from '../src/protocol/frames.js'
import { firmwareStatusFrame, FirmwareStatusOutbox } from '../src/firmware-status-outbox.js'

describe('FirmwareStatusOutbox', () => {
  it('keeps the latest unsent status of each rollout, busy excepted, and sends them on flush', () => {
    let up = false
    const sent: FirmwareStatusFrame[] = []
    const outbox = new FirmwareStatusOutbox((frame) => up && sent.push(frame) > 0)
    const status = (rollout_id: string, state: FirmwareStatusFrame['state'], progress?: number) =>
      firmwareStatusFrame({ rollout_id, release_id: 'rel-2', state, ...(progress !== undefined && { progress }) })

    expect(outbox.report(status('ro-1', 'downloading', 40))).toBe(false)
    expect(outbox.report(status('ro-2', 'busy'))).toBe(false)
    expect(outbox.report(status('ro-3', 'installing', 0))).toBe(false)
    expect(outbox.report(status('ro-1', 'installed'))).toBe(false)
    expect(outbox.size).toBe(2)
    up = true
    outbox.flush()
    expect(sent.map((f) => `${f.rollout_id} ${f.state}`)).toEqual(['ro-3 installing', 'ro-1 installed'])
    expect(outbox.size).toBe(0)
    expect(outbox.report(status('ro-4', 'failed'))).toBe(true)
  })

  it('makes statuses the gateway accepts: whole progress in 0–100, error of at most 1024 characters, surrogate pairs kept whole', () => {
    expect(firmwareStatusFrame({ rollout_id: 'r', release_id: 'x', state: 'downloading', progress: -3 })).toMatchObject({ progress: 0 })
    expect(firmwareStatusFrame({ rollout_id: 'r', release_id: 'x', state: 'downloading', progress: 99.9 })).toMatchObject({ progress: 99 })
    const error = firmwareStatusFrame({ rollout_id: 'r', release_id: 'x', state: 'failed', error: `${'a'.repeat(1023)}😀tail` }).error!
    expect(error).toBe('a'.repeat(1023))
    expect(() => firmwareStatusFrame({ rollout_id: '', release_id: 'x', state: 'installed' })).toThrow(/rollout_id/)
  })
})
