/**
 * Cursor paging: a list query fetches `limit + 1` rows; the extra row only tells that there
 * is a next page.
 */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return { rows: rows.slice(0, limit), more: rows.length > limit }
}

/** The page, and when there is a next one, the cursor taken from the page's last row. */
export function pageWithCursor<T, C>(rows: T[], limit: number, cursorOf: (row: T) => C): { rows: T[]; next?: C } {
  const { rows: page, more } = pageOf(rows, limit)
  return more ? { rows: page, next: cursorOf(page[page.length - 1]!) } : { rows: page }
}

/** For lists ordered by id, newest first: the page and the `next_before` cursor, if any. */
export function newestFirstPage<T extends { id: number }>(rows: T[], limit: number): { rows: T[]; next_before?: number } {
  const { rows: page, next } = pageWithCursor(rows, limit, (row) => row.id)
  return next === undefined ? { rows: page } : { rows: page, next_before: next }
}
