import type { ReactNode } from 'react'

/** A named landmark (`<section aria-label>`) with a visible heading. */
export function Region({ label, children, className }: { label: string; children: ReactNode; className?: string }) {
  return (
    <section aria-label={label} className={`region ${className ?? ''}`}>
      <h2>{label}</h2>
      {children}
    </section>
  )
}
