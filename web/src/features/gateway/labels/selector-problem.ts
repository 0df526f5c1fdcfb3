import { ApiError } from '../../../api/api-error'

/** What the server said of a malformed selector (§15: 400 `invalid_selector` with `position`). */
export interface SelectorProblem {
  message: string
  /** The 0-based character where the selector went wrong, when the server gave one. */
  position: number | null
}

/** The selector problem an error carries, or null for any other error (or none). */
export function selectorProblemOf(error: unknown): SelectorProblem | null {
  if (!(error instanceof ApiError) || error.code !== 'invalid_selector') return null
  const position = error.body.position
  return { message: error.message, position: typeof position === 'number' && Number.isInteger(position) && position >= 0 ? position : null }
}

/** The selector cut where it went wrong: what came before, the character at fault (a space past the end), and the rest. */
export function splitAtProblem(selector: string, position: number): [before: string, at: string, after: string] {
  const at = Math.min(position, selector.length)
  return [selector.slice(0, at), selector.slice(at, at + 1) || ' ', selector.slice(at + 1)]
}
