import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'
import type { Answer } from '../../../api/types'

export type AddDeviceAnswer = Answer<'/api/admin/device/add', 'post'>

/** POST /api/admin/device/add: the answer carries the device token, shown once. */
export function useAddDevice() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (input: { device_id: string; model: string }) => ok(api.POST('/api/admin/device/add', { body: input })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: platformKeys.devices() })
      void client.invalidateQueries({ queryKey: platformKeys.summary() })
    },
  })
}
