import type { Random } from './seeded-random.js'

/** A feeder that misses more than the rest: `fleetgate sim --bad-feeder F3:0.05`. */
export interface BadFeeder {
  /** Only this machine's feeder; every machine's when absent. */
  machine?: string
  /** `F1` … `F12`: the feeder slot the part sits in. */
  feeder: string
  /** Miss rate of this feeder, 0–1. */
  rate: number
}

/** Firmware that places worse: after installing a release whose id starts with `releasePrefix`, the machine misses at `missRate`. */
export interface WorseFirmware {
  releasePrefix: string
  missRate: number
}

/** Tries of one part beyond which the machine gives up retrying and places it anyway (so a rate of 1 ends). */
const MAX_MISSES_PER_PART = 10

/**
 * How often a machine misses: every pick of a part fails with the rate of its feeder (the
 * machine's rate, a bad feeder's own, or a worse firmware's), and the machine picks again. With
 * rate p the share of misses among tries, missed ÷ (placed + missed), is p.
 */
export class MissModel {
  constructor(
    private readonly random: Random,
    private readonly missRate: number,
    private readonly badFeeders: ReadonlyMap<string, number>,
    private readonly worseFirmware: WorseFirmware | undefined,
  ) {}

  /** The rate a pick from `feeder` fails at, with the controller running `releaseId`. */
  rate(feeder: string, releaseId: string | undefined): number {
    const worse = this.worseFirmware && releaseId?.startsWith(this.worseFirmware.releasePrefix) ? this.worseFirmware.missRate : 0
    return Math.max(this.badFeeders.get(feeder) ?? this.missRate, worse)
  }

  /** Misses before the part is placed. */
  missesFor(feeder: string, releaseId: string | undefined): number {
    const rate = this.rate(feeder, releaseId)
    let misses = 0
    while (misses < MAX_MISSES_PER_PART && this.random() < rate) misses++
    return misses
  }
}

const FEEDER_NAME = /^F([1-9]|1[0-2])$/

/**
 * `--bad-feeder` values: `F3:0.05`, several comma-separated or the flag repeated. Feeders are
 * `F1`–`F12` (the simulated machine's 12 slots), rates 0–1. A message saying what is wrong otherwise.
 */
export function parseBadFeeders(values: readonly string[]): BadFeeder[] | { error: string } {
  const feeders = new Map<string, number>()
  for (const spec of values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')) {
    const colon = spec.lastIndexOf(':')
    const feeder = colon < 0 ? spec : spec.slice(0, colon)
    const rateText = colon < 0 ? '' : spec.slice(colon + 1)
    if (!FEEDER_NAME.test(feeder)) return { error: `--bad-feeder: "${spec}" must be FEEDER:RATE with FEEDER one of F1 … F12 (the feeder slot), e.g. F3:0.05` }
    const rate = parseRate(rateText)
    if (rate === undefined) return { error: `--bad-feeder: the rate of "${spec}" must be a number from 0 to 1, e.g. F3:0.05` }
    feeders.set(feeder, rate)
  }
  return [...feeders].map(([feeder, rate]) => ({ feeder, rate }))
}

/** A number 0–1 written plainly (`0.003`, `1`, `.5`), else undefined. */
export function parseRate(text: string): number | undefined {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text)) return undefined
  const rate = Number(text)
  return rate >= 0 && rate <= 1 ? rate : undefined
}
