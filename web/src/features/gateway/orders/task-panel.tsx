import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { deviceCall } from '../machine/device-api'
import type { Task } from './placement-file'

/** The live progress bar (polled each second while a task runs) and Pause / Resume / Stop. */
export function TaskPanel({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const task = useQuery({
    queryKey: machineKeys.task(id),
    queryFn: ({ signal }) => deviceCall<{ task: Task | null }>(id, '/tasks/current', { signal }),
    refetchInterval: (query) => (query.state.data?.task?.state === 'running' ? 1000 : 5000),
  })
  const control = useMutation({
    mutationFn: (action: 'pause' | 'resume' | 'stop') => deviceCall(id, `/tasks/${action}`, { method: 'POST' }),
    onSettled: () => {
      void client.invalidateQueries({ queryKey: machineKeys.task(id) })
      void client.invalidateQueries({ queryKey: machineKeys.orders(id) })
    },
  })
  const current = task.data?.task ?? null
  const placed = current?.placed ?? 0
  const total = current?.total ?? 0
  const state = current?.state ?? 'idle'
  const percent = total > 0 ? (100 * placed) / total : 0
  return (
    <div className="task">
      <div
        role="progressbar"
        aria-label={t('machine.taskProgress')}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={placed}
        aria-valuetext={t('machine.placed', { placed, total })}
        className="progress"
      >
        <div className="progress-bar" style={{ width: `${percent}%` }} />
      </div>
      <p>
        {current ? t('machine.taskState', { state }) : t('machine.noTask')} · {t('machine.placed', { placed, total })}
      </p>
      <div className="actions">
        <button type="button" disabled={state !== 'running'} onClick={() => control.mutate('pause')}>
          {t('machine.pause')}
        </button>
        <button type="button" disabled={state !== 'paused'} onClick={() => control.mutate('resume')}>
          {t('machine.resume')}
        </button>
        <button type="button" disabled={state !== 'running' && state !== 'paused'} onClick={() => control.mutate('stop')}>
          {t('machine.stop')}
        </button>
      </div>
      {control.error ? <Alert>{control.error.message}</Alert> : null}
    </div>
  )
}
