import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { QueryState } from '../../../components/ui/query-state'
import { Region } from '../../../components/ui/region'
import { ConfirmButton } from '../../../components/ui/confirm-button'
import { useClearCommands } from './clear-commands'
import { CommandForm } from './command-form'
import { CommandsTable } from './commands-table'
import { commandsQuery, metaQuery } from './get-commands'

export function CommandsPanel({ deviceId }: { deviceId: string }) {
  const { t } = useTranslation()
  const meta = useQuery(metaQuery())
  const commands = useQuery(commandsQuery(deviceId))
  const clear = useClearCommands(deviceId)
  return (
    <Region label={t('platform.commands')} className="commands">
      <div className="panes">
        {meta.data ? <CommandForm deviceId={deviceId} meta={meta.data} /> : <QueryState isPending={meta.isPending} error={meta.error} />}
        <div>
          <div className="toolbar">
            <ConfirmButton
              label={t('platform.clearCommands')}
              question={t('platform.clearCommandsQuestion', { id: deviceId })}
              onConfirm={async () => t('platform.deleted', { count: (await clear.mutateAsync()).deleted })}
            />
          </div>
          {commands.data ? <CommandsTable rows={commands.data.commands} /> : <QueryState isPending={commands.isPending} error={commands.error} />}
        </div>
      </div>
    </Region>
  )
}
