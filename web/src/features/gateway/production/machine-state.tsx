import { skipToken, useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { productionKeys } from '../../../api/query-keys'
import { formatSeconds } from '../../../components/ui/format'
import type { KnownState, MachineStateEvent } from './production-types'

/**
 * The machine's last §11 `machine-state` event (events/event-router.ts puts each into
 * `productionKeys.state`, an older one never replacing a newer).
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

/**
 * What the page shows: the newer of the fetched state (`state` of `GET …/production`) and the
 * last event, by when the machine entered it; an event wins a tie. A refetch that read the server
 * before an event answers an older `since`, so it never puts an older state back.
 */
export function newestState(fetched: KnownState | null | undefined, event: MachineStateEvent | null | undefined): KnownState | null {
  if (event && (!fetched || event.at >= fetched.since)) return { state: event.state, reason: event.reason, since: event.at }
  return fetched ?? null
}

/**
 * The machine's current state: fetched with its figures, then live from `machine-state` events.
 * A machine that never reported one is "Offline" when not linked (§16: its link closed) and
 * "Unknown" otherwise; never a guess.
 */
export function CurrentState({ id, alive, fetched }: { id: string; alive: boolean | undefined; fetched: KnownState | null | undefined }) {
  const { t } = useTranslation()
  const known = newestState(fetched, useMachineState(id))
  const state = known?.state ?? (alive === false ? 'offline' : null)
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
      {known?.reason ? ` · ${t('production.reason', { reason: t(`production.reasons.${known.reason}`, { defaultValue: known.reason }) })}` : null}
      {known ? ` · ${t('production.since', { time: formatSeconds(known.since, '') })}` : null}
    </p>
  )
}
