import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../../api/api'
import type { Rollout } from '../../../../api/types'
import { putRollout } from '../../../../events/rollout-events'

export type RolloutAction = 'pause' | 'resume' | 'abort'

/** Which actions apply to a rollout in its state (anything else answers 409). */
export function rolloutActionApplies(action: RolloutAction, state: Rollout['state']): boolean {
  if (action === 'pause') return state === 'running'
  if (action === 'resume') return state === 'paused'
  return state === 'running' || state === 'paused'
}

/** `POST …/rollouts/{id}/pause|resume|abort` → `{rollout}`, written into the cache at once. */
export function useChangeRollout(id: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (action: RolloutAction) =>
      ok(api.POST(`/api/v1/admin/firmware/slave/rollouts/{rollout_id}/${action}`, { params: { path: { rollout_id: id } } })),
    onSuccess: ({ rollout }) => putRollout(client, rollout),
  })
}
