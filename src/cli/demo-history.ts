/** Hours of production history the demo machines report when the demo starts (contract §16). */
export const DEMO_HISTORY_HOURS = 12

/**
 * Whether any of `machines` already has placements in the last `hours` (an earlier demo run on
 * the same data directory): then the demo reports no history again, which would count twice.
 * Asks `GET /api/v1/production` as `admin`; false when it cannot tell.
 */
export async function hasRecentProduction(url: string, admin: { username: string; password: string }, machines: readonly string[], hours: number): Promise<boolean> {
  const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admin) })
  if (!login.ok) return false
  const authorization = `Bearer ${((await login.json()) as { token: string }).token}`
  const to = Math.ceil(Date.now() / 1000)
  const answer = await fetch(`${url}/api/v1/production?from=${to - hours * 3600}&to=${to}`, { headers: { authorization } })
  if (!answer.ok) return false
  const { groups } = (await answer.json()) as { groups: { key: string | null; placed: number }[] }
  return groups.some((g) => g.key !== null && machines.includes(g.key) && g.placed > 0)
}
