/**
 * The "Start rollout" dialog's text fields, read the way the server will judge them (contract
 * §14): `stages` 1–20 strictly ascending whole percentages from 1 to 100, the last 100;
 * `max_failure_ratio` from 0 to 1. A problem is a translation key with its values, so the
 * dialog can say exactly what is wrong before anything is sent.
 */

export const MAX_STAGES = 20
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
 * semicolons or spaces, and may carry a "%".
 */
export function parseStages(text: string): Parsed<number[], StagesProblem> {
  const parts = text
    .split(/[\s,;，、；]+/u)
    .map((p) => p.trim())
    .filter((p) => p !== '')
  if (parts.length === 0) return { ok: false, problem: { key: 'rollouts.stagesEmpty' } }
  if (parts.length > MAX_STAGES) return { ok: false, problem: { key: 'rollouts.stagesTooMany', count: parts.length, max: MAX_STAGES } }
  const stages: number[] = []
  for (const part of parts) {
    const digits = part.replace(/[%％]$/u, '')
    if (!/^\d+$/.test(digits)) return { ok: false, problem: { key: 'rollouts.stagesNotWhole', value: part } }
    const value = Number(digits)
    if (value < 1 || value > 100) return { ok: false, problem: { key: 'rollouts.stagesOutOfRange', value: part } }
    const previous = stages[stages.length - 1]
    if (previous !== undefined && value <= previous) {
      return { ok: false, problem: { key: 'rollouts.stagesNotAscending', value: part, previous: String(previous) } }
    }
    stages.push(value)
  }
  if (stages[stages.length - 1] !== 100) return { ok: false, problem: { key: 'rollouts.stagesLastNot100', value: String(stages[stages.length - 1]) } }
  return { ok: true, value: stages }
}

export type RatioProblem = { key: 'rollouts.ratioInvalid'; value: string }

/** "0.1" → 0.1: a plain decimal number from 0 to 1. */
export function parseFailureRatio(text: string): Parsed<number, RatioProblem> {
  const trimmed = text.trim()
  const value = /^(\d+(\.\d*)?|\.\d+)$/.test(trimmed) ? Number(trimmed) : NaN
  if (!(value >= 0 && value <= 1)) return { ok: false, problem: { key: 'rollouts.ratioInvalid', value: trimmed } }
  return { ok: true, value }
}
