import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { ConfirmButton } from '../../../components/ui/confirm-button'
import { formatDuration, formatSeconds } from '../../../components/ui/format'
import { ForwardedAnswer } from '../../../components/ui/forwarded-answer'
import { useNow } from '../../../components/ui/use-now'
import { deviceCall } from '../machine/device-api'
import { useMachineOnline } from '../machine/get-overview'
import { BoardImage } from './board-image'
import { elapsedSeconds, readTask, type TaskView } from './read-task'

const KNOWN_STATES = ['idle', 'running', 'paused', 'done', 'stopped']
type TaskAction = 'pause' | 'resume' | 'stop'

/** Whether an action applies in `state`; with a state the console does not know, the machine decides. */
function applies(action: TaskAction, state: string | undefined): boolean {
  if (state === undefined || !KNOWN_STATES.includes(state)) return true
  if (action === 'pause') return state === 'running'
  if (action === 'resume') return state === 'paused'
  return state === 'running' || state === 'paused'
}

/** The live progress bar (polled each second while a task runs), elapsed time, the board image, and Pause / Resume / Stop. */
export function TaskPanel({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const online = useMachineOnline(id)
  const task = useQuery({
    queryKey: machineKeys.task(id),
    queryFn: ({ signal }) => deviceCall<unknown>(id, '/tasks/current', { signal }),
    enabled: online,
    refetchInterval: (query) => {
      if (!online) return false
      const view = readTask(query.state.data)
      return view.shape === 'task' && view.state === 'running' ? 1000 : 5000
    },
  })
  const control = useMutation({
    mutationFn: (action: TaskAction) => deviceCall(id, `/tasks/${action}`, { method: 'POST' }),
    onSettled: () => {
      void client.invalidateQueries({ queryKey: machineKeys.task(id) })
      void client.invalidateQueries({ queryKey: machineKeys.orders(id) })
    },
  })
  const view: TaskView = task.isSuccess ? readTask(task.data) : { shape: 'none' }
  const state = view.shape === 'task' ? view.state : undefined
  const can = (action: TaskAction) => online && view.shape !== 'none' && applies(action, state)
  return (
    <div className="task">
      <TaskProgress view={view} />
      {view.shape === 'unknown' ? <ForwardedAnswer value={task.data} /> : null}
      <div className="actions">
        <button type="button" disabled={!can('pause') || control.isPending} onClick={() => control.mutate('pause')}>
          {t('machine.pause')}
        </button>
        <button type="button" disabled={!can('resume') || control.isPending} onClick={() => control.mutate('resume')}>
          {t('machine.resume')}
        </button>
        <ConfirmButton
          label={t('machine.stop')}
          question={t('machine.stopQuestion', { machine: id })}
          disabled={!can('stop')}
          onConfirm={async () => {
            await control.mutateAsync('stop')
            return ''
          }}
        />
      </div>
      {control.error ? <Alert>{control.error.message}</Alert> : null}
      {task.error ? <Alert>{task.error.message}</Alert> : null}
      <BoardImage id={id} running={state === 'running'} />
    </div>
  )
}

function TaskProgress({ view }: { view: TaskView }) {
  const { t } = useTranslation()
  const now = useNow()
  const task = view.shape === 'task' ? view : undefined
  const placed = task?.placed ?? 0
  const total = task?.total ?? 0
  const percent = total > 0 ? (100 * Math.min(placed, total)) / total : 0
  const elapsed = elapsedSeconds(view, now / 1000)
  const facts = [
    task?.state !== undefined ? t('machine.taskState', { state: task.state }) : null,
    task?.placed !== undefined && task.total !== undefined ? t('machine.placed', { placed, total }) : null,
    task?.startedAt !== undefined ? t('machine.startedAt', { time: formatSeconds(task.startedAt, '') }) : null,
    elapsed !== undefined ? t('machine.elapsed', { time: formatDuration(elapsed * 1000) }) : null,
  ].filter((f) => f !== null)
  return (
    <>
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
      {view.shape === 'none' ? <p>{t('machine.noTask')}</p> : null}
      {facts.length > 0 ? <p>{facts.join(' · ')}</p> : null}
    </>
  )
}
