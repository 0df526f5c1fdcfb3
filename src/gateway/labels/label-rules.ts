/**
 * What a machine's labels may be (contract §15), in a module that imports nothing so the web
 * console can take it as it is. The server words a problem (`labelProblemMessage`) and names its
 * key in the 400; the console may translate the same problem.
 */

export const MAX_LABELS = 32
export const MAX_LABEL_KEY_LENGTH = 63
export const MAX_LABEL_VALUE_LENGTH = 63

/** 1–63 characters of `[a-z0-9._/-]`, starting and ending with a letter or digit. */
export const LABEL_KEY_PATTERN = '^[a-z0-9](?:[a-z0-9._/-]{0,61}[a-z0-9])?$'
/** 0–63 characters of `[A-Za-z0-9._-]`. */
export const LABEL_VALUE_PATTERN = '^[A-Za-z0-9._-]{0,63}$'

const LABEL_KEY = new RegExp(LABEL_KEY_PATTERN)
const LABEL_VALUE = new RegExp(LABEL_VALUE_PATTERN)

export const LABEL_KEY_RULE = '1–63 characters of a–z 0–9 . _ / -, starting and ending with a letter or digit'
export const LABEL_VALUE_RULE = '0–63 characters of A–Z a–z 0–9 . _ -'

export const isLabelKey = (key: string): boolean => LABEL_KEY.test(key)
export const isLabelValue = (value: string): boolean => LABEL_VALUE.test(value)

/** What is wrong with a set of labels, naming the key at fault. */
export type LabelProblem =
  | { kind: 'tooMany'; count: number; max: number }
  | { kind: 'badKey'; key: string }
  | { kind: 'badValue'; key: string }

export function labelKeyProblem(key: string): LabelProblem | undefined {
  return isLabelKey(key) ? undefined : { kind: 'badKey', key }
}

/** A label's value must be a string of the value rule; `null` only where it removes the key (a merge). */
export function labelEntryProblem(key: string, value: unknown, { nullRemoves = false } = {}): LabelProblem | undefined {
  const keyProblem = labelKeyProblem(key)
  if (keyProblem) return keyProblem
  if (value === null && nullRemoves) return undefined
  return typeof value === 'string' && isLabelValue(value) ? undefined : { kind: 'badValue', key }
}

/** Why `labels` cannot be a machine's whole set of labels (a replacement, or the result of a merge). */
export function labelsProblem(labels: Readonly<Record<string, unknown>>): LabelProblem | undefined {
  const keys = Object.keys(labels)
  if (keys.length > MAX_LABELS) return { kind: 'tooMany', count: keys.length, max: MAX_LABELS }
  return firstProblem(keys, (key) => labelEntryProblem(key, labels[key]))
}

/**
 * Why `changes` cannot be merged into a machine's labels: a `null` value removes its key. The
 * count is checked on the merged result (`labelsProblem`).
 */
export function labelChangesProblem(changes: Readonly<Record<string, unknown>>): LabelProblem | undefined {
  return firstProblem(Object.keys(changes), (key) => labelEntryProblem(key, changes[key], { nullRemoves: true }))
}

function firstProblem(keys: readonly string[], check: (key: string) => LabelProblem | undefined): LabelProblem | undefined {
  for (const key of keys) {
    const problem = check(key)
    if (problem) return problem
  }
  return undefined
}

export function labelProblemMessage(problem: LabelProblem): string {
  switch (problem.kind) {
    case 'tooMany':
      return `A machine has at most ${problem.max} labels, not ${problem.count}`
    case 'badKey':
      return `Invalid label key ${JSON.stringify(problem.key)}: ${LABEL_KEY_RULE}`
    case 'badValue':
      return `Invalid value of label ${JSON.stringify(problem.key)}: ${LABEL_VALUE_RULE}`
  }
}
