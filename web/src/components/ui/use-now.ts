import { useSyncExternalStore } from 'react'

/** One shared clock ticking every second while any component shows something that ages. */
const listeners = new Set<() => void>()
let now = Date.now()
let timer: ReturnType<typeof setInterval> | undefined

function subscribe(listener: () => void): () => void {
  listeners.add(listener)
  now = Date.now()
  timer ??= setInterval(() => {
    now = Date.now()
    for (const l of listeners) l()
  }, 1000)
  return () => {
    listeners.delete(listener)
    if (listeners.size === 0) {
      clearInterval(timer)
      timer = undefined
    }
  }
}

/** Epoch milliseconds, re-rendering the caller each second (ages, elapsed times). */
export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now)
}
