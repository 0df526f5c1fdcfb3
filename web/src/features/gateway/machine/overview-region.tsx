import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import type { Overview, OverviewPiece } from '../../../api/types'
import { Alert } from '../../../components/ui/alert'
import { isPlainObject } from '../../../components/ui/forwarded-answer'
import { Region } from '../../../components/ui/region'
import { ValueList } from './value-list'

const LABEL_KEYS = {
  system: 'machine.system',
  task: 'machine.task',
  hardware: 'machine.hardware',
  vision: 'machine.vision',
  cameras: 'machine.cameras',
  debug: 'machine.debug',
} as const

/** One piece of the overview: its failure (partial_errors) in an alert inside the region, else its data. */
export function OverviewRegion({ piece, overview, children }: { piece: OverviewPiece; overview: Overview | undefined; children?: ReactNode }) {
  const { t } = useTranslation()
  const failure = overview?.partial_errors[piece]
  const detail = overview?.detail[piece] ?? {}
  return (
    <Region label={t(LABEL_KEYS[piece])}>
      {failure ? <Alert>{failure.message}</Alert> : null}
      {!failure && overview ? (
        isNoTask(piece, detail) ? <p>{t('machine.noTask')}</p> : <ValueList value={summarise(piece, detail)} empty={t('app.none')} />
      ) : null}
      {children}
    </Region>
  )
}

/** The reference machine's `{task: null}`: no task has run yet. */
const isNoTask = (piece: OverviewPiece, detail: Record<string, unknown>) =>
  piece === 'task' && Object.keys(detail).length === 1 && detail.task === null

/**
 * The overview's detail, trimmed of what other regions of the page show better: the task
 * region unwraps `{task: {...}}`, the system region leaves position and task to theirs. An answer
 * of any other shape is shown whole.
 */
function summarise(piece: OverviewPiece, detail: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(detail)
  if (piece === 'task' && keys.length === 1 && isPlainObject(detail.task)) return detail.task
  if (piece === 'system') {
    const rest = Object.fromEntries(Object.entries(detail).filter(([key, value]) => !((key === 'position' || key === 'task') && isPlainObject(value))))
    return Object.keys(rest).length > 0 ? rest : detail
  }
  return detail
}
