import { useMutation, useQuery } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Alert } from '../../../components/ui/alert'
import { useNow } from '../../../components/ui/use-now'
import { deviceCall } from '../machine/device-api'
import { overviewQuery } from '../machine/get-overview'
import { answeredState, shownState, SWITCH_NAMES, type SwitchAnswer, type SwitchName } from './switch-state'

const LABELS = { pump: 'machine.pump', valve: 'machine.valve', light: 'machine.light' } as const

/**
 * Pump, Valve and Light as switches showing what the machine said (contract §12): its heartbeat
 * status, or its answer to the last set. Unknown until then: unchecked, disabled, "Unknown".
 */
export function MachineSwitches({ id }: { id: string }) {
  const { t } = useTranslation()
  const overview = useQuery(overviewQuery(id)).data
  const [answers, setAnswers] = useState<Partial<Record<SwitchName, SwitchAnswer>>>({})
  const baseId = useId()
  // Re-reads the heartbeat once an answer's hold is over.
  const now = useNow()
  const status = overview?.status
  const lastHeartbeat = overview?.device.last_heartbeat ?? null
  const online = overview?.device.alive === true
  const toggle = useMutation({
    mutationFn: ({ name, state }: { name: SwitchName; state: boolean }) => deviceCall<unknown>(id, `/hardware/${name}`, { json: { state } }),
    onSuccess: (answer, { name }) => {
      const state = answeredState(answer, name)
      // An answer that does not say the state leaves the switch to the next heartbeat.
      if (state !== undefined) setAnswers((a) => ({ ...a, [name]: { state, status, lastHeartbeat, at: Date.now() } }))
    },
  })
  return (
    <>
      <div className="switches">
        {SWITCH_NAMES.map((name) => {
          const state = shownState(status, lastHeartbeat, name, answers[name], now)
          const stateId = `${baseId}-${name}`
          const busy = toggle.isPending && toggle.variables?.name === name
          return (
            <span key={name} className="switch">
              <button
                type="button"
                role="switch"
                aria-checked={state === true}
                aria-describedby={stateId}
                disabled={state === undefined || !online || busy}
                onClick={() => state !== undefined && toggle.mutate({ name, state: !state })}
              >
                {t(LABELS[name])}
              </button>
              <span id={stateId} className={state === undefined ? 'switch-state unknown' : 'switch-state'}>
                {state === undefined ? t('machine.switchUnknown') : state ? t('machine.switchOn') : t('machine.switchOff')}
              </span>
            </span>
          )
        })}
      </div>
      {toggle.error ? <Alert>{toggle.error.message}</Alert> : null}
    </>
  )
}
