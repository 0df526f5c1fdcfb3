/** A device answer as a definition list: scalars as text, nested values as compact JSON. */
export function ValueList({ value, empty }: { value: Record<string, unknown>; empty?: string }) {
  const entries = Object.entries(value)
  if (entries.length === 0) return empty ? <p>{empty}</p> : null
  return (
    <dl className="kv">
      {entries.map(([key, v]) => (
        <div key={key} style={{ display: 'contents' }}>
          <dt>{key}</dt>
          <dd>{format(v)}</dd>
        </div>
      ))}
    </dl>
  )
}

function format(v: unknown): string {
  if (v === null || v === undefined) return '—'
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3)
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}
