import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link, useParams } from 'react-router'
import { Notice } from '../../../components/ui/alert'
import { QueryState } from '../../../components/ui/query-state'
import { MachineLabels } from '../labels/machine-labels'
import { ControlPanel } from '../control/control-panel'
import { OrdersPanel } from '../orders/orders-panel'
import { MachineProductionRegion } from '../production/machine-production'
import { CameraImages } from './camera-images'
import { DebugConsole } from './debug-console'
import { overviewQuery } from './get-overview'
import { OverviewRegion } from './overview-region'

/** /machines/{id}: its labels, the overview regions, control, orders and task, production (§16), cameras and the debug console. */
export function MachinePage() {
  const { t } = useTranslation()
  const id = useParams().id!
  const overview = useQuery(overviewQuery(id))
  const data = overview.data
  return (
    <>
      <p>
        <Link to="/machines">{t('machine.back')}</Link>
      </p>
      <h1>{id}</h1>
      <MachineLabels id={id} device={data?.device} />
      {data && !data.device.alive ? <Notice>{t('machine.offline')}</Notice> : null}
      {!data ? <QueryState isPending={overview.isPending} error={overview.error} /> : null}
      <div className="grid">
        <OverviewRegion piece="system" overview={data} />
        <OverviewRegion piece="task" overview={data} />
        <OverviewRegion piece="hardware" overview={data} />
        <OverviewRegion piece="vision" overview={data} />
      </div>
      <div className="grid">
        <ControlPanel id={id} />
        <OverviewRegion piece="cameras" overview={data}>
          <CameraImages id={id} />
        </OverviewRegion>
      </div>
      <OrdersPanel id={id} />
      {/* Production only for a machine the caller may see (an unknown or unbound one has only the overview's error). */}
      {data ? <MachineProductionRegion id={id} alive={data.device.alive} /> : null}
      <div className="grid">
        <OverviewRegion piece="debug" overview={data}>
          <DebugConsole id={id} />
        </OverviewRegion>
      </div>
    </>
  )
}
