import { isPlainObject } from '../../../components/ui/forwarded-answer'

/** What the console reads of a `GET /tasks/current` answer (contract §10's `{task: {…} | null}`). */
export type TaskView =
  | { shape: 'none' }
  | {
      shape: 'task'
      state?: string
      placed?: number
      total?: number
      /** Seconds since epoch. */
      startedAt?: number
      finishedAt?: number
    }
  /** An answer of a shape the console does not know: shown as it came. */
  | { shape: 'unknown' }

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

export function readTask(answer: unknown): TaskView {
  if (!isPlainObject(answer) || !('task' in answer)) return { shape: 'unknown' }
  const task = answer.task
  if (task === null) return { shape: 'none' }
  if (!isPlainObject(task)) return { shape: 'unknown' }
  const view = {
    shape: 'task' as const,
    state: typeof task.state === 'string' ? task.state : undefined,
    placed: num(task.placed),
    total: num(task.total),
    startedAt: num(task.started_at),
    finishedAt: num(task.finished_at),
  }
  // A task object with none of these is a shape the console does not know either.
  const knows = view.state !== undefined || view.placed !== undefined || view.total !== undefined || view.startedAt !== undefined
  return knows ? view : { shape: 'unknown' }
}

/** Seconds a task has run: to its end, or to `nowSeconds` while it is not over. */
export function elapsedSeconds(view: TaskView, nowSeconds: number): number | undefined {
  if (view.shape !== 'task' || view.startedAt === undefined) return undefined
  const over = view.state === 'done' || view.state === 'stopped'
  const end = view.finishedAt ?? (over ? undefined : nowSeconds)
  return end === undefined ? undefined : Math.max(0, end - view.startedAt)
}
