import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { labelKeys, machineKeys } from '../../../api/query-keys'
import type { Labels } from '../../../api/types'
import type { PolledOverview } from '../machine/get-overview'

/**
 * "Save" of "Edit labels": `PUT /api/v1/admin/devices/{id}/labels` replaces all of the machine's
 * labels (§15). The labels stored show on its page at once; the lists, the counts by selector
 * and the keys in use are asked again (no event says labels changed).
 */
export function useSaveLabels(id: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (labels: Labels) => ok(api.PUT('/api/v1/admin/devices/{device_id}/labels', { params: { path: { device_id: id } }, body: { labels } })),
    onSuccess: ({ device }) => {
      client.setQueryData<PolledOverview>(machineKeys.overview(id), (o) => (o ? { ...o, device: { ...o.device, labels: device.labels } } : o))
      for (const queryKey of [machineKeys.lists(), machineKeys.selectorCounts(), labelKeys.all]) void client.invalidateQueries({ queryKey }, { cancelRefetch: false })
    },
  })
}
