import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Alert, Notice } from '../../../components/ui/alert'
import type { PlatformMeta } from '../platform-types'
import { fieldsOf, readParams, type ParamField } from './param-fields'
import { useSendCommand } from './send-command'

/** Form "Send command": an "Action" select from meta.actions and one input per param of the chosen action. */
export function CommandForm({ deviceId, meta }: { deviceId: string; meta: PlatformMeta }) {
  const { t } = useTranslation()
  const headingId = useId()
  const [action, setAction] = useState(meta.actions[0]?.action ?? '')
  const send = useSendCommand(deviceId)
  const fields = fieldsOf(meta.actions.find((a) => a.action === action)?.params ?? {})
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    send.mutate({ action, params: readParams(fields, e.currentTarget) })
  }
  return (
    <form aria-labelledby={headingId} onSubmit={submit} className="command-form">
      <h3 id={headingId}>{t('platform.sendCommand')}</h3>
      <div className="fields">
        <label>
          {t('platform.action')}
          <select
            name="action"
            value={action}
            onChange={(e) => {
              setAction(e.target.value)
              send.reset()
            }}
          >
            {meta.actions.map((a) => (
              <option key={a.action} value={a.action}>
                {a.action}
              </option>
            ))}
          </select>
        </label>
        {fields.map((field) => (
          // Keyed by action: switching actions starts from empty inputs.
          <ParamInput key={`${action}.${field.name}`} field={field} />
        ))}
        {fields.length === 0 ? <p className="muted">{t('platform.noParams')}</p> : null}
      </div>
      <div className="actions">
        <button type="submit" disabled={send.isPending || !action}>
          {t('platform.send')}
        </button>
      </div>
      {send.error ? <Alert>{send.error.message}</Alert> : null}
      {send.isSuccess ? <Notice>{t('platform.commandQueued', { id: String(send.data.command.id) })}</Notice> : null}
    </form>
  )
}

function ParamInput({ field }: { field: ParamField }) {
  const { t } = useTranslation()
  const hintId = useId()
  const hint = field.kind === 'choices' ? t('platform.keysHelp') : hintOf(field)
  const described = hint ? { 'aria-describedby': hintId } : {}
  const control = (() => {
    switch (field.kind) {
      case 'integer':
      case 'number':
        return <input name={field.name} type="number" step={field.kind === 'integer' ? 1 : 'any'} min={field.min} max={field.max} required {...described} />
      case 'text':
        return <input name={field.name} type="text" minLength={field.minLength} maxLength={field.maxLength} required {...described} />
      case 'choice':
        return (
          <select name={field.name} required {...described}>
            {field.options.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        )
      case 'choices':
        return (
          <select name={field.name} multiple size={6} required {...described}>
            {field.options.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        )
      case 'boolean':
        return <input name={field.name} type="checkbox" {...described} />
      case 'json':
        return <textarea name={field.name} rows={3} required {...described} />
    }
  })()
  return (
    <div className="param">
      <label>
        {field.name}
        {control}
      </label>
      {hint ? (
        <small id={hintId} className="muted">
          {hint}
        </small>
      ) : null}
    </div>
  )
}

function hintOf(field: ParamField): string | undefined {
  const parts: string[] = []
  const describesRange = field.hint?.includes('…') ?? false
  if ((field.kind === 'integer' || field.kind === 'number') && field.min !== undefined && field.max !== undefined && !describesRange) parts.push(`${field.min}…${field.max}`)
  if (field.kind === 'text' && field.maxLength !== undefined) parts.push(`≤ ${field.maxLength}`)
  if (field.hint && !(field.kind === 'choice' && field.hint.startsWith('One of'))) parts.push(field.hint)
  return parts.length ? parts.join(', ') : undefined
}
