import { useQuery } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { selectorMatchesQuery } from './selector-matches'

/** Typing settles this long before the count is asked for. */
export const COUNT_DELAY_MS = 300

/**
 * How many machines `selector` matches, asked as the user types once the typing pauses
 * (`counted` is the selector last asked about). `flush` asks about the current text at once.
 */
export function useSelectorCount(selector: string, enabled: boolean) {
  const wanted = selector.trim()
  const [counted, setCounted] = useState(wanted)
  useEffect(() => {
    const timer = setTimeout(() => setCounted(wanted), COUNT_DELAY_MS)
    return () => clearTimeout(timer)
  }, [wanted])
  const query = useQuery({ ...selectorMatchesQuery(counted), enabled: enabled && counted !== '' })
  return { query, counted, settled: counted === wanted, flush: () => setCounted(wanted) }
}
