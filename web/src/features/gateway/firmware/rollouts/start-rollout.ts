import { useMutation, useQueryClient } from '@tanstack/react-query'
import { apiFetch } from '../../../../api/api-client'
import type { RolloutAnswer, StartRolloutBody } from '../../../../api/types'
import { putRollout } from '../../../../events/rollout-events'
import { ROLLOUTS_PATH } from './get-rollouts'

/** `POST …/rollouts` → 201 `{rollout}`; 400 (stages, ratio), 404 (release) and 409 (one running or paused) keep the server's message. */
export function useStartRollout() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: StartRolloutBody) => apiFetch<RolloutAnswer>(ROLLOUTS_PATH, { json: body }),
    onSuccess: ({ rollout }) => putRollout(client, rollout),
  })
}
