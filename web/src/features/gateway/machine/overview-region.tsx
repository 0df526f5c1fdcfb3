import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import type { Overview, OverviewPiece } from '../../../api/types'
import { Alert } from '../../../components/ui/alert'
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
      {!failure && overview ? <ValueList value={summarise(piece, detail)} empty={t('app.none')} /> : null}
      {children}
    </Region>
  )
}

/** The overview's detail, trimmed of what other regions of the page show better. */
function summarise(piece: OverviewPiece, detail: Record<string, unknown>): Record<string, unknown> {
  if (piece === 'task') {
    const task = detail.task as Record<string, unknown> | null | undefined
    return task ? { id: task.id, order_id: task.order_id, state: task.state, placed: task.placed, total: task.total } : {}
  }
  if (piece === 'system') {
    const { position: _p, task: _t, ...rest } = detail
    return rest
  }
  return detail
}
