import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { deviceCall } from './device-api'

interface Frame {
  content_type: string
  encoding: 'base64'
  data: string
  width: number
  height: number
}

function CameraImage({ id, cam }: { id: string; cam: 'up' | 'down' }) {
  const { t } = useTranslation()
  const frame = useQuery({
    queryKey: machineKeys.camera(id, cam),
    queryFn: ({ signal }) => deviceCall<Frame>(id, `/cameras/${cam}/frame`, { signal }),
    refetchInterval: 2000,
  })
  const alt = cam === 'up' ? t('machine.cameraUp') : t('machine.cameraDown')
  if (!frame.data) return <div className="cam-placeholder">{alt}</div>
  return <img src={`data:${frame.data.content_type};base64,${frame.data.data}`} alt={alt} width={frame.data.width} height={frame.data.height} />
}

/** Both cameras' PNG frames, refreshed every 2 s. */
export function CameraImages({ id }: { id: string }) {
  return (
    <div className="cams">
      <CameraImage id={id} cam="up" />
      <CameraImage id={id} cam="down" />
    </div>
  )
}
