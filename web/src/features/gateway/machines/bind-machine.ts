import { useMutation, useQueryClient } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { machineKeys } from '../../../api/query-keys'

export interface BindInput {
  machine: string
  username: string
  password: string
}

/** Device login (contract §5): a success binds the machine to the signed-in user. */
export function useBindMachine() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: ({ machine, username, password }: BindInput) =>
      apiFetch<{ device_id: string }>(`/api/v1/devices/${encodeURIComponent(machine)}/auth/login`, { json: { username, password } }),
    onSuccess: () => client.invalidateQueries({ queryKey: machineKeys.lists() }),
  })
}
