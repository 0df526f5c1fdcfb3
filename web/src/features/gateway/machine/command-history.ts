/** Commands kept for recall in the Command box. */
export const HISTORY_SIZE = 50

/**
 * The Command box's history, shell-like: ArrowUp recalls older commands, ArrowDown newer ones and
 * finally what was being typed before browsing.
 */
export interface CommandHistory {
  entries: readonly string[]
  /** The entry shown while browsing; null when not browsing. */
  index: number | null
  /** What was in the box when browsing began. */
  draft: string
}

export const emptyHistory: CommandHistory = { entries: [], index: null, draft: '' }

/** After sending `command`: it becomes the newest entry (not twice in a row) and browsing ends. */
export function remember(history: CommandHistory, command: string): CommandHistory {
  const entries = history.entries.at(-1) === command ? history.entries : [...history.entries, command].slice(-HISTORY_SIZE)
  return { entries, index: null, draft: '' }
}

/** ArrowUp with `typed` in the box: the history and the text to show. */
export function older(history: CommandHistory, typed: string): { history: CommandHistory; text: string } {
  if (history.entries.length === 0) return { history, text: typed }
  const index = history.index === null ? history.entries.length - 1 : Math.max(0, history.index - 1)
  const draft = history.index === null ? typed : history.draft
  return { history: { ...history, index, draft }, text: history.entries[index]! }
}

/** ArrowDown: a newer entry, or back to the draft past the newest. */
export function newer(history: CommandHistory, typed: string): { history: CommandHistory; text: string } {
  if (history.index === null) return { history, text: typed }
  if (history.index >= history.entries.length - 1) return { history: { ...history, index: null, draft: '' }, text: history.draft }
  const index = history.index + 1
  return { history: { ...history, index }, text: history.entries[index]! }
}
