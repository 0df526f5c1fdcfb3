import { answerText, isPlainObject } from '../../../components/ui/forwarded-answer'

/**
 * The lines of a serial-log answer: `{lines: [...]}` whose entries are strings (shown as they are),
 * the reference machine's `{direction: "tx"|"rx", line}` (an arrow for the direction) or anything
 * else (as JSON). An answer of another shape is one entry, shown as it came.
 */
export function serialLines(answer: unknown): string[] {
  const lines = isPlainObject(answer) ? answer.lines : undefined
  if (!Array.isArray(lines)) return answer === undefined ? [] : [answerText(answer)]
  return lines.map((entry) => {
    if (typeof entry === 'string') return entry
    if (isPlainObject(entry) && typeof entry.line === 'string') {
      const arrow = entry.direction === 'tx' ? '→ ' : entry.direction === 'rx' ? '← ' : ''
      return `${arrow}${entry.line}`
    }
    return answerText(entry)
  })
}
