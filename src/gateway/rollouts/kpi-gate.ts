/**
 * The rollouts' KPI gate (§16, §14): before the next stage opens, each machine of the ended stage
 * that reported `installed` is compared with itself — its miss rate over its placements from its
 * `installed` report on, against its miss rate over the same number of placements just before
 * its offer. Pure: the repository gathers each machine's counts, this decides.
 */

export interface KpiGate {
  /** The stage's miss rate after minus before may be at most this (0–1). */
  max_miss_rate_increase: number
  /** Placements (placed + missed) each machine must make after installing before it counts. */
  min_placements: number
  /** After this long since the stage ended, only the machines with enough placements count. */
  wait_seconds: number
}

export const KPI_GATE_DEFAULTS = { min_placements: 1000, wait_seconds: 86400 } as const

/** What the gate of an ended stage is doing (`gate` on the rollout). */
export const GATE_STATES = ['waiting', 'passed', 'regression'] as const
export type GateState = (typeof GATE_STATES)[number]

/** Placed and missed of one machine on one side of its install. */
export interface Counts {
  placed: number
  missed: number
}

/** One installed machine: its placements after installing, and whether it had any before its offer. */
export interface InstalledMachine {
  device_id: string
  /** When the release was offered to it: its placements before this are compared. */
  offered_at: number
  after: Counts
  placedBefore: boolean
}

export type GateReadiness = { kind: 'waiting'; short: number } | { kind: 'ready'; counted: InstalledMachine[] }

/** A counted machine: its placements after installing, and the same number (or as many as there were) just before its offer. */
export interface ComparedMachine {
  after: Counts
  before: Counts
}

export type GateVerdict = { kind: 'passed' | 'regression'; counted: number; before_rate: number | null; after_rate: number | null; increase: number | null }

const total = (c: Counts) => c.placed + c.missed
const rateOf = (cs: readonly Counts[]): number | null => {
  const n = cs.reduce((sum, c) => sum + total(c), 0)
  return n === 0 ? null : cs.reduce((sum, c) => sum + c.missed, 0) / n
}

/**
 * Whether the gate can decide, and over which machines. A machine without placements before its
 * offer is not counted. While some counted machine has fewer than `min_placements` after
 * installing, the gate waits — until `wait_seconds` have passed since the stage ended; then only
 * the machines with enough count.
 */
export function gateReadiness(gate: KpiGate, machines: readonly InstalledMachine[], secondsSinceStageEnded: number): GateReadiness {
  const comparable = machines.filter((m) => m.placedBefore)
  const enough = comparable.filter((m) => total(m.after) >= gate.min_placements)
  const short = comparable.length - enough.length
  if (short > 0 && secondsSinceStageEnded < gate.wait_seconds) return { kind: 'waiting', short }
  return { kind: 'ready', counted: enough }
}

/**
 * The verdict over the counted machines: Σmissed ÷ Σ(placed + missed) after minus the same
 * before, above `max_miss_rate_increase`, is a regression. With none to count, the gate passes.
 */
export function gateVerdict(gate: KpiGate, counted: readonly ComparedMachine[]): GateVerdict {
  const beforeRate = rateOf(counted.map((m) => m.before))
  const afterRate = rateOf(counted.map((m) => m.after))
  if (beforeRate === null || afterRate === null) return { kind: 'passed', counted: 0, before_rate: null, after_rate: null, increase: null }
  const increase = afterRate - beforeRate
  return { kind: increase > gate.max_miss_rate_increase ? 'regression' : 'passed', counted: counted.length, before_rate: beforeRate, after_rate: afterRate, increase }
}
