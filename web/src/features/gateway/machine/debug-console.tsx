import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useId, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { emptyHistory, newer, older, remember } from './command-history'
import { deviceCall } from './device-api'
import { useMachineOnline, whileOnline } from './get-overview'
import { serialLines } from './serial-lines'
import { ValueList } from './value-list'

/** Command + Send to the lower controller (↑/↓ recall earlier commands), its answer, and the serial log scrolled to the newest line. */
export function DebugConsole({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const online = useMachineOnline(id)
  const commandId = useId()
  const helpId = useId()
  const [text, setText] = useState('')
  const [history, setHistory] = useState(emptyHistory)
  const log = useQuery({
    queryKey: machineKeys.serialLog(id),
    queryFn: ({ signal }) => deviceCall<unknown>(id, '/debug/serial-log?limit=50', { signal }),
    ...whileOnline(online, 3000),
  })
  const send = useMutation({
    mutationFn: (command: string) => deviceCall<unknown>(id, '/debug/send', { json: { command } }),
    onSettled: () => client.invalidateQueries({ queryKey: machineKeys.serialLog(id) }),
  })
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const command = text.trim()
    if (!command) return
    send.mutate(command)
    setHistory(remember(history, command))
    setText('')
  }
  const browse = (e: React.KeyboardEvent<HTMLInputElement>) => {
    const step = e.key === 'ArrowUp' ? older : e.key === 'ArrowDown' ? newer : null
    if (!step) return
    e.preventDefault()
    const next = step(history, text)
    setHistory(next.history)
    setText(next.text)
  }
  const lines = log.isSuccess ? serialLines(log.data) : []
  const list = useRef<HTMLUListElement>(null)
  const newest = lines.at(-1)
  // Keeping the log's scroll position on the newest line is DOM work, what an effect is for.
  useEffect(() => {
    const el = list.current
    if (el) el.scrollTop = el.scrollHeight
  }, [lines.length, newest])
  return (
    <>
      <form onSubmit={submit} className="actions">
        <label htmlFor={commandId} style={{ display: 'inline' }}>
          {t('machine.command')}
        </label>
        <input id={commandId} name="command" autoComplete="off" value={text} onChange={(e) => setText(e.target.value)} onKeyDown={browse} aria-describedby={helpId} />
        <button type="submit" disabled={send.isPending || !online}>
          {t('machine.send')}
        </button>
      </form>
      <p id={helpId} className="hint">
        {t('machine.commandHelp')}
      </p>
      {send.error ? <Alert>{send.error.message}</Alert> : null}
      {send.isSuccess ? (
        <output className="answer" aria-label={t('machine.answer')}>
          <ValueList value={send.data} empty={t('app.none')} />
        </output>
      ) : null}
      <h3>{t('machine.serialLog')}</h3>
      {log.error ? <Alert>{log.error.message}</Alert> : null}
      <ul className="serial" aria-label={t('machine.serialLog')} ref={list} tabIndex={0}>
        {lines.map((line, i) => (
          <li key={i}>{line}</li>
        ))}
      </ul>
    </>
  )
}
