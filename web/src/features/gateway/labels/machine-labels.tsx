import { useTranslation } from 'react-i18next'
import type { DeviceRecord } from '../../../api/types'
import { isAdmin, useSession } from '../../../session/session'
import { EditLabelsButton } from './edit-labels-dialog'
import { LabelChips } from './label-chips'

/** Region "Labels" of the machine page: its labels, and "Edit labels" for admins. */
export function MachineLabels({ id, device }: { id: string; device: DeviceRecord | undefined }) {
  const { t } = useTranslation()
  const admin = isAdmin(useSession())
  const labels = device?.labels
  return (
    <section aria-label={t('labels.labels')} className="region machine-labels">
      <div className="region-head">
        <h2>{t('labels.labels')}</h2>
        {admin && labels ? <EditLabelsButton id={id} labels={labels} /> : null}
      </div>
      {labels && Object.keys(labels).length === 0 ? <p className="muted">{t('labels.none')}</p> : null}
      {labels ? <LabelChips labels={labels} /> : null}
    </section>
  )
}
