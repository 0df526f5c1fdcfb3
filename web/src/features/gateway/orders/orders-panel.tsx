import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { apiFetch } from '../../../api/api-client'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { ConfirmButton } from '../../../components/ui/confirm-button'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatFixed } from '../../../components/ui/format'
import { Region } from '../../../components/ui/region'
import { ForwardedAnswer, isPlainObject } from '../../../components/ui/forwarded-answer'
import { devicePath } from '../machine/device-api'
import { useMachineOnline } from '../machine/get-overview'
import { fileToBase64, type ParsedComponent, type ParsedPlacement } from './placement-file'
import { TaskPanel } from './task-panel'

/** Rows of a parsed file shown at once; the order still gets every component. */
const PREVIEW_ROWS = 500

/** Placement file → Parsed components → Create order → Orders → Start task → Task progress. */
export function OrdersPanel({ id }: { id: string }) {
  const { t } = useTranslation()
  const client = useQueryClient()
  const fileId = useId()
  const nameId = useId()
  const [parsed, setParsed] = useState<{ filename: string; placement: ParsedPlacement } | null>(null)
  const [name, setName] = useState('')
  const parse = useMutation({
    mutationFn: async (file: File) => {
      const answer = await apiFetch<{ parsed: ParsedPlacement }>(devicePath(id, '/orders/parse'), {
        json: { filename: file.name, encoding: 'base64', data: await fileToBase64(file) },
      })
      return { filename: file.name, placement: answer.parsed }
    },
    onMutate: () => setParsed(null),
    onSuccess: (result) => {
      setParsed(result)
      setName(result.filename.replace(/\.[^.]+$/, ''))
    },
  })
  const online = useMachineOnline(id)
  const orders = useQuery({
    queryKey: machineKeys.orders(id),
    queryFn: ({ signal }) => apiFetch<{ orders: unknown }>(devicePath(id, '/orders'), { signal }),
    enabled: online,
  })
  // One order per click: a second click before the first answer (a double click) is ignored.
  const creating = useRef(false)
  const create = useMutation({
    mutationFn: (components: ParsedComponent[]) =>
      apiFetch<{ order: unknown }>(devicePath(id, '/orders'), {
        json: { name: name || 'order', items: components.map((c) => ({ component: c.designator, x: c.x, y: c.y, angle: c.rotation })) },
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: machineKeys.orders(id) }),
    onSettled: () => {
      creating.current = false
    },
  })
  const createOrder = (components: ParsedComponent[]) => {
    if (creating.current) return
    creating.current = true
    create.mutate(components)
  }
  const start = useMutation({
    mutationFn: (orderId: string) => apiFetch(devicePath(id, '/tasks/start'), { json: { order_id: orderId } }),
    onSettled: () => {
      void client.invalidateQueries({ queryKey: machineKeys.task(id) })
      void client.invalidateQueries({ queryKey: machineKeys.orders(id) })
    },
  })
  const remove = useMutation({
    mutationFn: (orderId: string) => apiFetch(devicePath(id, `/orders/${encodeURIComponent(orderId)}`), { method: 'DELETE' }),
    // Not awaited: the dialog closes first, then the row goes.
    onSuccess: () => void client.invalidateQueries({ queryKey: machineKeys.orders(id) }),
  })

  const componentColumns: Column<ParsedComponent>[] = [
    { key: 'designator', header: t('machine.designator'), cell: (c) => <ForwardedAnswer value={c.designator} /> },
    { key: 'value', header: t('machine.value'), cell: (c) => <ForwardedAnswer value={c.value} /> },
    { key: 'package', header: t('machine.package'), cell: (c) => <ForwardedAnswer value={c.package} /> },
    { key: 'x', header: t('machine.x'), cell: (c) => fixed(c.x, 3), numeric: true },
    { key: 'y', header: t('machine.y'), cell: (c) => fixed(c.y, 3), numeric: true },
    { key: 'rotation', header: t('machine.rotation'), cell: (c) => fixed(c.rotation, 1), numeric: true },
    { key: 'side', header: t('machine.side'), cell: (c) => <ForwardedAnswer value={c.side} /> },
  ]
  const orderColumns: Column<OrderRow>[] = [
    { key: 'id', header: t('machine.orderId'), cell: (o) => o.id },
    { key: 'name', header: t('machine.orderName'), cell: (o) => <ForwardedAnswer value={o.order.name} /> },
    { key: 'items', header: t('machine.orderItems'), cell: (o) => (Array.isArray(o.order.items) ? o.order.items.length : <ForwardedAnswer value={o.order.items} />), numeric: true },
    { key: 'state', header: t('machine.orderState'), cell: (o) => <ForwardedAnswer value={o.order.status} /> },
    {
      key: 'actions',
      header: t('machine.orderActions'),
      cell: (o) => (
        <div className="actions">
          <ConfirmButton
            label={t('machine.startTask')}
            question={t('machine.startTaskQuestion', { order: orderLabel(o), machine: id })}
            disabled={!online}
            onConfirm={async () => {
              await start.mutateAsync(o.id)
              return ''
            }}
          />
          <ConfirmButton
            label={t('machine.deleteOrder')}
            question={t('machine.deleteOrderQuestion', { order: orderLabel(o), machine: id })}
            disabled={!online}
            onConfirm={async () => {
              await remove.mutateAsync(o.id)
              return ''
            }}
          />
        </div>
      ),
    },
  ]
  const rows = orderRows(orders.data?.orders)

  return (
    <Region label={t('machine.orders')}>
      <p>
        <label htmlFor={fileId}>{t('machine.placementFile')}</label>{' '}
        <input
          id={fileId}
          type="file"
          accept=".pos,.csv,.txt"
          onChange={(e) => {
            const file = e.target.files?.[0]
            if (file) parse.mutate(file)
          }}
        />
      </p>
      {parse.error ? <Alert>{parse.error.message}</Alert> : null}
      {parsed ? (
        <>
          <p>{[parsed.placement.format, parsed.placement.count, parsed.placement.units].filter((v) => typeof v === 'string' || typeof v === 'number').join(' · ')}</p>
          {Array.isArray(parsed.placement.components) ? (
            <>
              <DataTable
                caption={t('machine.parsedComponents')}
                columns={componentColumns}
                rows={parsed.placement.components.slice(0, PREVIEW_ROWS)}
                rowKey={(c) => `${c.designator}-${c.side}-${c.x}-${c.y}`}
              />
              <p className="actions">
                <label htmlFor={nameId} style={{ display: 'inline' }}>
                  {t('machine.orderName')}
                </label>
                <input id={nameId} value={name} onChange={(e) => setName(e.target.value)} />
                <button type="button" disabled={create.isPending || !online} onClick={() => createOrder(parsed.placement.components)}>
                  {t('machine.createOrder')}
                </button>
              </p>
              {create.error ? <Alert>{create.error.message}</Alert> : null}
            </>
          ) : (
            <ForwardedAnswer value={parsed.placement} />
          )}
        </>
      ) : null}
      {orders.error ? <Alert>{orders.error.message}</Alert> : null}
      <DataTable caption={t('machine.orders')} columns={orderColumns} rows={rows} rowKey={(o) => o.key} />
      {orders.isSuccess && rows.length === 0 && !isEmptyList(orders.data.orders) ? <ForwardedAnswer value={orders.data.orders} /> : null}
      <TaskPanel id={id} />
    </Region>
  )
}

/** A number to `digits` places; anything else as the machine sent it. */
const fixed = (value: unknown, digits: number) => (typeof value === 'number' ? formatFixed(value, digits) : <ForwardedAnswer value={value} />)

/** An order as the machine listed it: the reference machine's fields are read only when they are there. */
interface OrderRow {
  key: string
  id: string
  order: Record<string, unknown>
}

const isEmptyList = (value: unknown) => Array.isArray(value) && value.length === 0

/** Rows for a list of orders with string ids; a list of any other shape gets none (it is shown as it came). */
function orderRows(orders: unknown): OrderRow[] {
  if (!Array.isArray(orders) || !orders.every((o) => isPlainObject(o) && typeof o.id === 'string')) return []
  return (orders as Record<string, unknown>[]).map((order) => ({ key: order.id as string, id: order.id as string, order }))
}

const orderLabel = (o: OrderRow) => (typeof o.order.name === 'string' && o.order.name !== o.id ? `${o.order.name} (${o.id})` : o.id)
