import { useSearchParams } from 'react-router'

/**
 * The machines list's filters kept in the URL: `?q=` (id prefix, machine-search.tsx) and
 * `?selector=` (labels, §15). Both apply together; changing one keeps the other and goes back to
 * the first page (drops `?after=`).
 */
export type MachineFilterParam = 'q' | 'selector'

export function withMachineFilter(params: URLSearchParams, name: MachineFilterParam, value: string): URLSearchParams {
  const next = new URLSearchParams(params)
  next.delete('after')
  if (value) next.set(name, value)
  else next.delete(name)
  return next
}

/** The selector of the URL (`?selector=`), spaces around it dropped; "" for none. */
export const selectorOf = (params: URLSearchParams): string => params.get('selector')?.trim() ?? ''

export function useSelectorFilter(): string {
  const [params] = useSearchParams()
  return selectorOf(params)
}
