import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { formatFixed, formatNumber } from '../../../components/ui/format'
import { isPlainObject } from '../../../components/ui/forwarded-answer'
import { Region } from '../../../components/ui/region'
import { deviceCall } from '../machine/device-api'
import { useMachineOnline, whileOnline } from '../machine/get-overview'
import { ValueList } from '../machine/value-list'
import { MachineSwitches } from './machine-switches'

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

/** The reference machine's `{x, y, z, r}`; an answer of another shape is shown as it came. */
function axesOf(answer: unknown): Position | undefined {
  if (!isPlainObject(answer)) return undefined
  const { x, y, z, r } = answer
  return typeof x === 'number' && typeof y === 'number' && typeof z === 'number' && typeof r === 'number' ? { x, y, z, r } : undefined
}

/** Position (polled twice a second while the machine is online), Step, jog pad and the Pump/Valve/Light switches. */
export function ControlPanel({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const stepId = useId()
  const online = useMachineOnline(id)
  const [step, setStep] = useState<(typeof STEPS)[number]>('1')
  const position = useQuery({
    queryKey: machineKeys.position(id),
    queryFn: ({ signal }) => deviceCall<unknown>(id, '/hardware/position', { signal }),
    ...whileOnline(online, 500),
  })
  const move = useMutation({
    mutationFn: (delta: Partial<Position>) => deviceCall(id, '/hardware/move', { json: { ...delta, relative: true } }),
    onSettled: () => client.invalidateQueries({ queryKey: machineKeys.position(id) }),
  })
  const p = position.isSuccess ? axesOf(position.data) : undefined
  return (
    <Region label={t('machine.control')}>
      <section aria-label={t('machine.position')} className="position">
        <h3>{t('machine.position')}</h3>
        {position.error ? <Alert>{position.error.message}</Alert> : null}
        {position.isSuccess && !p ? (
          <ValueList value={position.data} />
        ) : (
          <dl className="kv">
            <dt>X</dt>
            <dd>{p ? `${formatFixed(p.x, 2)} mm` : '—'}</dd>
            <dt>Y</dt>
            <dd>{p ? `${formatFixed(p.y, 2)} mm` : '—'}</dd>
            <dt>Z</dt>
            <dd>{p ? `${formatFixed(p.z, 2)} mm` : '—'}</dd>
            <dt>R</dt>
            <dd>{p ? `${formatFixed(p.r, 2)}°` : '—'}</dd>
          </dl>
        )}
      </section>
      <p>
        <label htmlFor={stepId} style={{ display: 'inline' }}>
          {t('machine.step')}{' '}
        </label>
        <select id={stepId} value={step} onChange={(e) => setStep(e.target.value as (typeof STEPS)[number])}>
          {STEPS.map((s) => (
            <option key={s} value={s}>
              {formatNumber(Number(s))} mm
            </option>
          ))}
        </select>
      </p>
      <div className="jog" role="group" aria-label={t('machine.jog')}>
        {JOG.map((j) => (
          <button key={j.key} type="button" disabled={!online} onClick={() => move.mutate({ [j.axis]: j.sign * Number(step) })}>
            {t(j.key)}
          </button>
        ))}
      </div>
      <MachineSwitches id={id} />
      {move.error ? <Alert>{move.error.message}</Alert> : null}
    </Region>
  )
}
