import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { deviceCall } from './device-api'

interface SerialLine {
  ts: number
  direction: 'tx' | 'rx'
  line: string
}

/** Command + Send to the lower controller, its answer, and the serial log. */
export function DebugConsole({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const commandId = useId()
  const log = useQuery({
    queryKey: machineKeys.serialLog(id),
    queryFn: ({ signal }) => deviceCall<{ lines: SerialLine[] }>(id, '/debug/serial-log?limit=50', { signal }),
    refetchInterval: 3000,
  })
  const send = useMutation({
    mutationFn: (command: string) => deviceCall<{ command: string; response: string; ok: boolean }>(id, '/debug/send', { json: { command } }),
    onSettled: () => client.invalidateQueries({ queryKey: machineKeys.serialLog(id) }),
  })
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const command = String(new FormData(e.currentTarget).get('command')).trim()
    if (command) send.mutate(command)
  }
  return (
    <>
      <form onSubmit={submit} className="actions">
        <label htmlFor={commandId} style={{ display: 'inline' }}>
          {t('machine.command')}
        </label>
        <input id={commandId} name="command" autoComplete="off" />
        <button type="submit" disabled={send.isPending}>
          {t('machine.send')}
        </button>
      </form>
      {send.error ? <Alert>{send.error.message}</Alert> : null}
      {send.data ? (
        <output className="answer" aria-label={t('machine.answer')}>
          <pre className="answer">{`${send.data.command}\n${send.data.response}`}</pre>
        </output>
      ) : null}
      <h3>{t('machine.serialLog')}</h3>
      <ul className="serial" aria-label={t('machine.serialLog')}>
        {(log.data?.lines ?? []).map((l, i) => (
          <li key={`${l.ts}-${i}`}>
            {l.direction === 'tx' ? '→' : '←'} {l.line}
          </li>
        ))}
      </ul>
    </>
  )
}
