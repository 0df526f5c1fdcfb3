import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { deviceCall } from './device-api'
import { FrameImage } from './frame-image'
import { useMachineOnline, whileOnline } from './get-overview'

function CameraImage({ id, cam }: { id: string; cam: 'up' | 'down' }) {
  const { t } = useTranslation()
  const online = useMachineOnline(id)
  const frame = useQuery({
    queryKey: machineKeys.camera(id, cam),
    queryFn: ({ signal }) => deviceCall<unknown>(id, `/cameras/${cam}/frame`, { signal }),
    ...whileOnline(online, 2000),
  })
  const alt = cam === 'up' ? t('machine.cameraUp') : t('machine.cameraDown')
  return (
    <div className="cam">
      {frame.isSuccess ? <FrameImage answer={frame.data} receivedAt={frame.dataUpdatedAt} alt={alt} /> : <div className="cam-placeholder">{alt}</div>}
      {frame.error ? <Alert>{frame.error.message}</Alert> : null}
    </div>
  )
}

/** Both cameras' frames, refreshed every 2 s while the machine is online; an old frame is marked stale. */
export function CameraImages({ id }: { id: string }) {
  return (
    <div className="cams">
      <CameraImage id={id} cam="up" />
      <CameraImage id={id} cam="down" />
    </div>
  )
}
