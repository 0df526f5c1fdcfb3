import { useMutation, useQueryClient } from '@tanstack/react-query'
import { apiFetch } from '../../../../api/api-client'
import type { Rollout, RolloutAnswer } from '../../../../api/types'
import { putRollout } from '../../../../events/rollout-events'
import { rolloutPath } from './get-rollouts'

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
    mutationFn: (action: RolloutAction) => apiFetch<RolloutAnswer>(`${rolloutPath(id)}/${action}`, { method: 'POST' }),
    onSuccess: ({ rollout }) => putRollout(client, rollout),
  })
}
