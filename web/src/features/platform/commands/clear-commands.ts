import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'

/** POST /api/admin/commands/clear for one device, history included. */
export function useClearCommands(deviceId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: () => ok(api.POST('/api/admin/commands/clear', { body: { device_id: deviceId, all: true } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: platformKeys.commands(deviceId) })
      void client.invalidateQueries({ queryKey: platformKeys.summary() })
      void client.invalidateQueries({ queryKey: platformKeys.operationLog() })
    },
  })
}
