import { useMutation, useQueryClient } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { platformKeys } from '../../../api/query-keys'
import type { PlatformDevice } from '../platform-types'

export interface AddDeviceAnswer {
  device: PlatformDevice
  device_token: string
}

/** POST /api/admin/device/add: the answer carries the device token, shown once. */
export function useAddDevice() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (input: { device_id: string; model: string }) => apiFetch<AddDeviceAnswer>('/api/admin/device/add', { json: input }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: platformKeys.devices() })
      void client.invalidateQueries({ queryKey: platformKeys.summary() })
    },
  })
}
