import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { deviceCall } from '../machine/device-api'
import { FrameImage } from '../machine/frame-image'
import { useMachineOnline, whileOnline } from '../machine/get-overview'

export const boardImageKey = (id: string) => [...machineKeys.detail(id), 'board-image'] as const

/** The board as the machine draws it (`GET /tasks/board_image`): every 2 s while a task runs, else every 10 s. */
export function BoardImage({ id, running }: { id: string; running: boolean }) {
  const { t } = useTranslation()
  const online = useMachineOnline(id)
  const image = useQuery({
    queryKey: boardImageKey(id),
    queryFn: ({ signal }) => deviceCall<unknown>(id, '/tasks/board_image', { signal }),
    ...whileOnline(online, running ? 2000 : 10_000),
  })
  return (
    <div className="board-image">
      {image.isSuccess ? <FrameImage answer={image.data} receivedAt={image.dataUpdatedAt} alt={t('machine.boardImage')} /> : null}
      {image.error ? <Alert>{image.error.message}</Alert> : null}
    </div>
  )
}
