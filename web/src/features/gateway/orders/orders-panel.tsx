import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { apiFetch } from '../../../api/api-client'
import { machineKeys } from '../../../api/query-keys'
import { Alert } from '../../../components/ui/alert'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { Region } from '../../../components/ui/region'
import { devicePath } from '../machine/device-api'
import { fileToBase64, type Order, type ParsedComponent, type ParsedPlacement } from './placement-file'
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
  const orders = useQuery({
    queryKey: machineKeys.orders(id),
    queryFn: ({ signal }) => apiFetch<{ orders: Order[] }>(devicePath(id, '/orders'), { signal }),
  })
  const create = useMutation({
    mutationFn: (components: ParsedComponent[]) =>
      apiFetch<{ order: Order }>(devicePath(id, '/orders'), {
        json: { name: name || 'order', items: components.map((c) => ({ component: c.designator, x: c.x, y: c.y, angle: c.rotation })) },
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: machineKeys.orders(id) }),
  })
  const start = useMutation({
    mutationFn: (orderId: string) => apiFetch(devicePath(id, '/tasks/start'), { json: { order_id: orderId } }),
    onSettled: () => {
      void client.invalidateQueries({ queryKey: machineKeys.task(id) })
      void client.invalidateQueries({ queryKey: machineKeys.orders(id) })
    },
  })

  const componentColumns: Column<ParsedComponent>[] = [
    { key: 'designator', header: t('machine.designator'), cell: (c) => c.designator },
    { key: 'value', header: t('machine.value'), cell: (c) => c.value },
    { key: 'package', header: t('machine.package'), cell: (c) => c.package },
    { key: 'x', header: t('machine.x'), cell: (c) => c.x.toFixed(3), numeric: true },
    { key: 'y', header: t('machine.y'), cell: (c) => c.y.toFixed(3), numeric: true },
    { key: 'rotation', header: t('machine.rotation'), cell: (c) => c.rotation.toFixed(1), numeric: true },
    { key: 'side', header: t('machine.side'), cell: (c) => c.side },
  ]
  const orderColumns: Column<Order>[] = [
    { key: 'id', header: t('machine.orderId'), cell: (o) => o.id },
    { key: 'name', header: t('machine.orderName'), cell: (o) => o.name },
    { key: 'items', header: t('machine.orderItems'), cell: (o) => o.items.length, numeric: true },
    { key: 'state', header: t('machine.orderState'), cell: (o) => o.status },
    {
      key: 'actions',
      header: t('machine.orderActions'),
      cell: (o) => (
        <button type="button" disabled={start.isPending} onClick={() => start.mutate(o.id)}>
          {t('machine.startTask')}
        </button>
      ),
    },
  ]

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
          <p>
            {parsed.placement.format} · {parsed.placement.count} · {parsed.placement.units}
          </p>
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
            <button type="button" disabled={create.isPending} onClick={() => create.mutate(parsed.placement.components)}>
              {t('machine.createOrder')}
            </button>
          </p>
          {create.error ? <Alert>{create.error.message}</Alert> : null}
        </>
      ) : null}
      {orders.error ? <Alert>{orders.error.message}</Alert> : null}
      <DataTable caption={t('machine.orders')} columns={orderColumns} rows={orders.data?.orders ?? []} rowKey={(o) => o.id} />
      {start.error ? <Alert>{start.error.message}</Alert> : null}
      <TaskPanel id={id} />
    </Region>
  )
}
