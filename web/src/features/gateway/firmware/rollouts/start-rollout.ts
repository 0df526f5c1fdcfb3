import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../../api/api'
import type { StartRolloutBody } from '../../../../api/types'
import { putRollout } from '../../../../events/rollout-events'

/** `POST …/rollouts` → 201 `{rollout}`; 400 (stages, ratio), 404 (release) and 409 (one running or paused) keep the server's message. */
export function useStartRollout() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: StartRolloutBody) => ok(api.POST('/api/v1/admin/firmware/slave/rollouts', { body })),
    onSuccess: ({ rollout }) => putRollout(client, rollout),
  })
}
