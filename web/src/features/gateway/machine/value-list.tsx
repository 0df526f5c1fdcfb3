import { ForwardedAnswer, isPlainObject } from '../../../components/ui/forwarded-answer'

/**
 * A machine's answer: an object as a definition list of its fields, each field (and any other
 * answer) rendered as the machine sent it (strings as text, anything else as formatted JSON).
 */
export function ValueList({ value, empty }: { value: unknown; empty?: string }) {
  if (!isPlainObject(value)) return <ForwardedAnswer value={value} />
  const entries = Object.entries(value)
  if (entries.length === 0) return empty ? <p>{empty}</p> : null
  return (
    <dl className="kv">
      {entries.map(([key, v]) => (
        <div key={key} style={{ display: 'contents' }}>
          <dt>{key}</dt>
          <dd>
            <ForwardedAnswer value={v} />
          </dd>
        </div>
      ))}
    </dl>
  )
}
