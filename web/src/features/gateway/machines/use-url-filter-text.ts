import { useRef } from 'react'
import { useSearchParams } from 'react-router'
import { useUrlDraft } from '../../../components/ui/use-url-draft'
import { withMachineFilter, type MachineFilterParam } from './machine-filters'

export interface UrlFilterTextOptions {
  /** The filter's value in the URL ("" for none); by default the parameter as it stands. */
  read?: (params: URLSearchParams) => string
  /** What goes in the URL for a text; by default the text itself. */
  normalize?: (text: string) => string
  /** A text that cannot be applied (left out of the URL). */
  accept?: (text: string) => boolean
  /**
   * Apply as the user types, once typing pauses this long. Such a box replaces the history entry
   * and leaves an unchanged value alone; without it, each apply (a submit) pushes an entry and
   * goes back to the first page.
   */
  delayMs?: number
}

/**
 * The text of a machines-list filter box kept in the URL (`?q=`, `?selector=`). A value changed
 * from outside (Back, a link) replaces the text; one this box put there leaves what is being
 * typed alone. `type` is the box's change, `apply` puts a text in the URL, `clear` empties both.
 */
export function useUrlFilterText(name: MachineFilterParam, options: UrlFilterTextOptions = {}) {
  const { read = (params) => params.get(name) ?? '', normalize = (text) => text, accept = () => true, delayMs } = options
  const [params, setParams] = useSearchParams()
  const value = read(params)
  const { draft: text, setDraft: setText, applying } = useUrlDraft(value, () => value)
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined)
  const apply = (next: string) => {
    clearTimeout(timer.current)
    if (!accept(next)) return
    const live = delayMs !== undefined
    if (live && next === value) return
    applying(next)
    setParams((current) => withMachineFilter(current, name, normalize(next)), { replace: live })
  }
  const type = (next: string) => {
    setText(next)
    if (delayMs === undefined) return
    clearTimeout(timer.current)
    timer.current = setTimeout(() => apply(next), delayMs)
  }
  const clear = () => {
    setText('')
    apply('')
  }
  return { value, text, type, apply, clear }
}
