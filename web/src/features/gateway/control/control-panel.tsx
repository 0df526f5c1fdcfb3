import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { Region } from '../../../components/ui/region'
import { deviceCall } from '../machine/device-api'

interface Position {
  x: number
  y: number
  z: number
  r: number
}

export const STEPS = ['0.1', '1', '10'] as const
const JOG = [
  { axis: 'x', sign: 1, key: 'machine.xPlus' },
  { axis: 'x', sign: -1, key: 'machine.xMinus' },
  { axis: 'y', sign: 1, key: 'machine.yPlus' },
  { axis: 'y', sign: -1, key: 'machine.yMinus' },
  { axis: 'z', sign: 1, key: 'machine.zPlus' },
  { axis: 'z', sign: -1, key: 'machine.zMinus' },
  { axis: 'r', sign: 1, key: 'machine.rPlus' },
  { axis: 'r', sign: -1, key: 'machine.rMinus' },
] as const

type SwitchName = 'pump' | 'valve' | 'light'
const SWITCHES: { name: SwitchName; key: 'machine.pump' | 'machine.valve' | 'machine.light' }[] = [
  { name: 'pump', key: 'machine.pump' },
  { name: 'valve', key: 'machine.valve' },
  { name: 'light', key: 'machine.light' },
]

/** Position (polled twice a second), Step, jog pad and the Pump/Valve/Light switches. */
export function ControlPanel({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const stepId = useId()
  const [step, setStep] = useState<(typeof STEPS)[number]>('1')
  const [switches, setSwitches] = useState<Record<SwitchName, boolean>>({ pump: false, valve: false, light: false })
  const position = useQuery({
    queryKey: machineKeys.position(id),
    queryFn: ({ signal }) => deviceCall<Position>(id, '/hardware/position', { signal }),
    refetchInterval: 500,
  })
  const move = useMutation({
    mutationFn: (delta: Partial<Position>) => deviceCall(id, '/hardware/move', { json: { ...delta, relative: true } }),
    onSettled: () => client.invalidateQueries({ queryKey: machineKeys.position(id) }),
  })
  const toggle = useMutation({
    mutationFn: ({ name, state }: { name: SwitchName; state: boolean }) => deviceCall(id, `/hardware/${name}`, { json: { state } }),
    onSuccess: (_data, { name, state }) => setSwitches((s) => ({ ...s, [name]: state })),
  })
  const error = move.error ?? toggle.error
  const p = position.data
  return (
    <Region label={t('machine.control')}>
      <section aria-label={t('machine.position')} className="position">
        <h3>{t('machine.position')}</h3>
        {position.error ? <Alert>{position.error.message}</Alert> : null}
        <dl className="kv">
          <dt>X</dt>
          <dd>{p ? `${p.x.toFixed(2)} mm` : '—'}</dd>
          <dt>Y</dt>
          <dd>{p ? `${p.y.toFixed(2)} mm` : '—'}</dd>
          <dt>Z</dt>
          <dd>{p ? `${p.z.toFixed(2)} mm` : '—'}</dd>
          <dt>R</dt>
          <dd>{p ? `${p.r.toFixed(2)}°` : '—'}</dd>
        </dl>
      </section>
      <p>
        <label htmlFor={stepId} style={{ display: 'inline' }}>
          {t('machine.step')}{' '}
        </label>
        <select id={stepId} value={step} onChange={(e) => setStep(e.target.value as (typeof STEPS)[number])}>
          {STEPS.map((s) => (
            <option key={s} value={s}>
              {s} mm
            </option>
          ))}
        </select>
      </p>
      <div className="jog" role="group" aria-label={t('machine.jog')}>
        {JOG.map((j) => (
          <button key={j.key} type="button" onClick={() => move.mutate({ [j.axis]: j.sign * Number(step) })}>
            {t(j.key)}
          </button>
        ))}
      </div>
      <div className="switches">
        {SWITCHES.map((s) => (
          <button
            key={s.name}
            type="button"
            role="switch"
            aria-checked={switches[s.name]}
            onClick={() => toggle.mutate({ name: s.name, state: !switches[s.name] })}
          >
            {t(s.key)}
          </button>
        ))}
      </div>
      {error ? <Alert>{error.message}</Alert> : null}
    </Region>
  )
}
