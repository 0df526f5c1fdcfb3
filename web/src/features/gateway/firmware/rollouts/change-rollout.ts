import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../../api/api'
import { putRollout } from '../../../../events/rollout-events'
import type { RolloutAction } from '../../../../../../src/gateway/rollouts/rollout-rules'

// Which actions apply in which state is the server's own table (anything else answers 409).
export { rolloutActionApplies, type RolloutAction } from '../../../../../../src/gateway/rollouts/rollout-rules'

/** `POST …/rollouts/{id}/pause|resume|abort` → `{rollout}`, written into the cache at once. */
export function useChangeRollout(id: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (action: RolloutAction) =>
      ok(api.POST(`/api/v1/admin/firmware/slave/rollouts/{rollout_id}/${action}`, { params: { path: { rollout_id: id } } })),
    onSuccess: ({ rollout }) => putRollout(client, rollout),
  })
}
