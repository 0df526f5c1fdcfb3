/**
 * Forwarded answers are machine-defined (contract §12, "Operating rules"): a string is shown as
 * text, a list of strings as lines, anything else as formatted JSON. Nothing the machine sent
 * becomes `undefined`, `[object Object]` or an empty marker.
 */
export function answerText(value: unknown): string {
  if (typeof value === 'string') return value
  // JSON has no undefined; a value that is absent is shown as absent, not as the word.
  if (value === undefined) return ''
  const pretty = JSON.stringify(value, null, 2) ?? String(value)
  // Short values stay on one line (`[ 10, 20, 5, 90 ]`); JSON strings escape their own newlines.
  const oneLine = pretty.replace(/\n\s*/g, ' ')
  return oneLine.length <= ONE_LINE_MAX ? oneLine : pretty
}

/** JSON up to this many characters is shown on one line. */
const ONE_LINE_MAX = 60

export const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** One forwarded value, rendered by the rule above. */
export function ForwardedAnswer({ value }: { value: unknown }) {
  if (typeof value === 'string') return <span className="answer-text">{value}</span>
  if (isStringList(value)) {
    return (
      <ul className="answer-lines">
        {value.map((line, i) => (
          <li key={i}>{line}</li>
        ))}
      </ul>
    )
  }
  if (typeof value === 'object' && value !== null) return <pre className="answer-json">{answerText(value)}</pre>
  return <span className="answer-text">{answerText(value)}</span>
}
