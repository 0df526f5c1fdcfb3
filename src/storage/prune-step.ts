/** What one batch of a pruning pass deleted: how many rows, and the newest time among them (where the next batch starts). */
export interface PruneStep {
  deleted: number
  newest?: number
}

export function pruneStep(rows: { ts: number }[]): PruneStep {
  let newest: number | undefined
  for (const { ts } of rows) if (newest === undefined || ts > newest) newest = Number(ts)
  return newest === undefined ? { deleted: 0 } : { deleted: rows.length, newest }
}
