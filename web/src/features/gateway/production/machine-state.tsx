import { skipToken, useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { productionKeys } from '../../../api/query-keys'
import { formatSeconds } from '../../../components/ui/format'
import type { MachineStateEvent } from './production-types'

/**
 * The machine's current state as its last §11 `machine-state` event said (events/event-router.ts
 * puts each into `productionKeys.state`). §16 has no endpoint for it: until an event arrives the
 * state is "Offline" for a machine not linked (§16: its link closed) and "Unknown" otherwise; never a guess.
 */
export function useMachineState(id: string) {
  // Nothing to fetch: the cache entry is written by events only (a fetch could overwrite an event that came first).
  return useQuery<MachineStateEvent | null>({
    queryKey: productionKeys.state(id),
    queryFn: skipToken,
    initialData: null,
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: Number.POSITIVE_INFINITY,
  }).data
}

export function CurrentState({ id, alive }: { id: string; alive: boolean | undefined }) {
  const { t } = useTranslation()
  const event = useMachineState(id)
  const state = event?.state ?? (alive === false ? 'offline' : null)
  return (
    <p className="current-state" aria-live="polite">
      {t('production.currentState')}{' '}
      {state ? (
        <span className={`state-chip state-${state}`}>
          <span className="swatch" aria-hidden="true" />
          {t(`production.states.${state}`, { defaultValue: state })}
        </span>
      ) : (
        <span className="muted">{t('production.stateUnknown')}</span>
      )}
      {event?.reason ? ` · ${t('production.reason', { reason: t(`production.reasons.${event.reason}`, { defaultValue: event.reason }) })}` : null}
      {event ? ` · ${t('production.since', { time: formatSeconds(event.at, '') })}` : null}
    </p>
  )
}
