import { delay } from '../lib/time.js'

/** Hours of production history the demo machines report when the demo starts (contract §16). */
export const DEMO_HISTORY_HOURS = 12

/** The `authorization` header of `admin`, undefined when it cannot sign in. */
export async function adminAuthorization(url: string, admin: { username: string; password: string }): Promise<string | undefined> {
  const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admin) })
  if (!login.ok) return undefined
  return `Bearer ${((await login.json()) as { token: string }).token}`
}

/** Which of `machines` have placements in the last `hours`, by `GET /api/v1/production`; none when it cannot tell. */
export async function machinesWithPlacements(url: string, authorization: string, machines: readonly string[], hours: number): Promise<string[]> {
  const to = Math.ceil(Date.now() / 1000)
  const answer = await fetch(`${url}/api/v1/production?from=${to - hours * 3600}&to=${to}`, { headers: { authorization } })
  if (!answer.ok) return []
  const { groups } = (await answer.json()) as { groups: { key: string | null; placed: number }[] }
  return machines.filter((id) => groups.some((g) => g.key === id && g.placed > 0))
}

/**
 * Waits (up to `timeoutMs`) until each of `machines` has placements stored: the KPI gate counts
 * only machines with placements before their offer, so the demo rollout starts after the history
 * is in. True when they all have.
 */
export async function historyStored(url: string, authorization: string, machines: readonly string[], hours: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs
  for (;;) {
    if ((await machinesWithPlacements(url, authorization, machines, hours)).length === machines.length) return true
    if (Date.now() >= until) return false
    await delay(250)
  }
}
