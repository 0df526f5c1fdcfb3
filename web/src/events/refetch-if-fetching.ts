import type { QueryClient, QueryKey } from '@tanstack/react-query'

/**
 * A fetch already under way may have read the server before this event happened; left alone it
 * would land after the in-place update and put the old value back. Refetch instead (invalidating
 * cancels the fetch in flight).
 */
export function refetchIfFetching(client: QueryClient, queryKey: QueryKey): void {
  if (client.isFetching({ queryKey }) > 0) void client.invalidateQueries({ queryKey })
}
