import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'
import type { CommandList } from '../platform-types'

/** POST /api/admin/device/{id}/command; the queued command goes to the top of the Commands table at once. */
export function useSendCommand(deviceId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (input: { action: string; params: Record<string, unknown> }) =>
      ok(api.POST('/api/admin/device/{device_id}/command', { params: { path: { device_id: deviceId } }, body: input })),
    onSuccess: ({ command }) => {
      client.setQueryData<CommandList>(platformKeys.commands(deviceId), (list) =>
        list && !list.commands.some((c) => c.id === command.id) ? { ...list, commands: [command, ...list.commands] } : list,
      )
      // A list fetched before this command was queued may still be on its way: refetch it.
      void client.invalidateQueries({ queryKey: platformKeys.commands(deviceId) })
      void client.invalidateQueries({ queryKey: platformKeys.summary() })
    },
  })
}
