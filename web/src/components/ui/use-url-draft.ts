import { useState } from 'react'

/**
 * What a form holds of a value kept in the URL (a filter's text): `draft` starts as the URL's
 * value and follows it when the URL changes from outside (Back, a link), but not when the change
 * is one the form made itself (named by `applying` before it navigates): the URL changes a render
 * later, in a transition, and what is typed meanwhile must stay. `inUrl` names the URL's value,
 * `fromUrl` makes a draft of it.
 */
export function useUrlDraft<T>(inUrl: string, fromUrl: () => T) {
  const [draft, setDraft] = useState(fromUrl)
  // What the form last applied, and the URL's value as last seen.
  const [applied, setApplied] = useState(inUrl)
  const [seen, setSeen] = useState(inUrl)
  if (inUrl !== seen) {
    setSeen(inUrl)
    if (inUrl !== applied) {
      setApplied(inUrl)
      setDraft(fromUrl())
    }
  }
  return { draft, setDraft, applying: setApplied }
}
