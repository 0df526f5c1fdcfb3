import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'

/** POST /api/admin/logs/clear: one device's own log entries (the operation log keeps the record of the clear). */
export function useClearLogs(deviceId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: () => ok(api.POST('/api/admin/logs/clear', { body: { device_id: deviceId, source: 'device' } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: [...platformKeys.device(deviceId), 'logs'] })
      void client.invalidateQueries({ queryKey: platformKeys.operationLog() })
    },
  })
}
