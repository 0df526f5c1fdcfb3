import type { ReactNode } from 'react'

/** An error announced to screen readers, inside the region that failed. */
export function Alert({ children, title }: { children: ReactNode; title?: string }) {
  return (
    <div role="alert" className="alert">
      {title ? <strong>{title}</strong> : null}
      {children}
    </div>
  )
}

/** A polite confirmation (not an error). */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <p role="status" className="notice">
      {children}
    </p>
  )
}
