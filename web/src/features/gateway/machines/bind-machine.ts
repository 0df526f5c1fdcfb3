import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
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
      ok(api.POST('/api/v1/devices/{device_id}/auth/login', { params: { path: { device_id: machine } }, body: { username, password } })),
    // The binding event refetches the lists too (throttled); this one shows the machine at once.
    onSuccess: () => client.invalidateQueries({ queryKey: machineKeys.lists() }, { cancelRefetch: false }),
  })
}
