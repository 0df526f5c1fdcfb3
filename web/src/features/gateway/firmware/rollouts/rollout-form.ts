import { stagesProblem } from '../../../../../../src/gateway/rollouts/rollout-rules'
import type { StartRolloutBody } from '../../../../api/types'
/**
 * The "Start rollout" dialog's text fields, read the way the server will judge them (contract
 * §14): `stages` 1–20 strictly ascending whole percentages from 1 to 100, the last 100;
 * `max_failure_ratio` from 0 to 1. A problem is a translation key with its values, so the
 * dialog can say exactly what is wrong before anything is sent.
 */

export { MAX_STAGES } from '../../../../../../src/gateway/rollouts/rollout-rules'
export const DEFAULT_STAGES = '10, 100'
export const DEFAULT_MAX_FAILURE_RATIO = '0.1'

export type StagesProblem =
  | { key: 'rollouts.stagesEmpty' }
  | { key: 'rollouts.stagesNotWhole'; value: string }
  | { key: 'rollouts.stagesOutOfRange'; value: string }
  | { key: 'rollouts.stagesNotAscending'; value: string; previous: string }
  | { key: 'rollouts.stagesLastNot100'; value: string }
  | { key: 'rollouts.stagesTooMany'; count: number; max: number }

export type Parsed<T, P> = { ok: true; value: T } | { ok: false; problem: P }

/**
 * "10, 50, 100" → [10, 50, 100]. Numbers may be separated by commas (also "，" and "、"),
 * semicolons or spaces, and may carry a "%". The list is then judged by the server's own rule
 * (`stagesProblem`, shared), so the dialog and the server never disagree.
 */
export function parseStages(text: string): Parsed<number[], StagesProblem> {
  const parts = text
    .split(/[\s,;，、；]+/u)
    .map((p) => p.trim())
    .filter((p) => p !== '')
  if (parts.length === 0) return { ok: false, problem: { key: 'rollouts.stagesEmpty' } }
  const stages: number[] = []
  for (const part of parts) {
    const digits = part.replace(/[%％]$/u, '')
    if (!/^\d+$/.test(digits)) return { ok: false, problem: { key: 'rollouts.stagesNotWhole', value: part } }
    stages.push(Number(digits))
  }
  const problem = stagesProblem(stages)
  if (!problem) return { ok: true, value: stages }
  switch (problem.kind) {
    case 'empty':
      return { ok: false, problem: { key: 'rollouts.stagesEmpty' } }
    case 'tooMany':
      return { ok: false, problem: { key: 'rollouts.stagesTooMany', count: problem.count, max: problem.max } }
    case 'outOfRange':
      return { ok: false, problem: { key: 'rollouts.stagesOutOfRange', value: String(problem.value) } }
    case 'notAscending':
      return { ok: false, problem: { key: 'rollouts.stagesNotAscending', value: String(problem.value), previous: String(problem.previous) } }
    case 'lastNot100':
      return { ok: false, problem: { key: 'rollouts.stagesLastNot100', value: String(problem.value) } }
  }
}

export type RatioProblem = { key: 'rollouts.ratioInvalid'; value: string }

/** "0.1" → 0.1: a plain decimal number from 0 to 1. */
export function parseFailureRatio(text: string): Parsed<number, RatioProblem> {
  const trimmed = text.trim()
  const value = /^(\d+(\.\d*)?|\.\d+)$/.test(trimmed) ? Number(trimmed) : NaN
  if (!(value >= 0 && value <= 1)) return { ok: false, problem: { key: 'rollouts.ratioInvalid', value: trimmed } }
  return { ok: true, value }
}

/**
 * The optional KPI gate of a rollout (§16 "Rollouts watch production"): before the next stage
 * opens, the stage's miss rate after installing may rise by at most `max_miss_rate_increase` over before.
 */
export type KpiGate = Required<NonNullable<StartRolloutBody['kpi_gate']>>
export const DEFAULT_MIN_PLACEMENTS = '1000'
export const DEFAULT_WAIT_SECONDS = '86400'

export type KpiGateProblem =
  | { key: 'rollouts.missRateInvalid'; field: 'increase' }
  | { key: 'rollouts.minPlacementsInvalid'; field: 'placements' }
  | { key: 'rollouts.waitInvalid'; field: 'wait' }

/**
 * The gate's three fields: no "Max miss-rate increase" means no gate (the other two are then
 * ignored); else a decimal from 0 to 1 ("0.002", also "0,002"), min placements a whole number ≥ 1,
 * the wait whole seconds ≥ 0.
 */
export function parseKpiGate(increase: string, placements: string, wait: string): Parsed<KpiGate | null, KpiGateProblem> {
  const i = increase.trim().replace(',', '.')
  if (i === '') return { ok: true, value: null }
  const rate = /^(\d+(\.\d*)?|\.\d+)$/.test(i) ? Number(i) : NaN
  if (!(rate >= 0 && rate <= 1)) return { ok: false, problem: { key: 'rollouts.missRateInvalid', field: 'increase' } }
  const p = placements.trim()
  if (!/^\d+$/.test(p) || Number(p) < 1 || !Number.isSafeInteger(Number(p))) return { ok: false, problem: { key: 'rollouts.minPlacementsInvalid', field: 'placements' } }
  const w = wait.trim()
  if (!/^\d+$/.test(w) || !Number.isSafeInteger(Number(w))) return { ok: false, problem: { key: 'rollouts.waitInvalid', field: 'wait' } }
  return { ok: true, value: { max_miss_rate_increase: rate, min_placements: Number(p), wait_seconds: Number(w) } }
}
