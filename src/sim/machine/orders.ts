import { Type, type Static } from '@sinclair/typebox'
import { created, ok, RouteError, type RouteTable } from '@fleetgate/device-agent'
import { parsePlacementFile } from '../placement/parse-placement-file.js'
import { PlacementError } from '../placement/placement-schema.js'
import { toSeconds, type Clock } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'
import { conflict, notFound, parseBody } from './validate-body.js'

export const ORDER_STATUSES = ['pending', 'in_progress', 'done', 'stopped', 'cancelled'] as const
export const OrderStatus = Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s)))
export type OrderStatus = Static<typeof OrderStatus>

export const OrderItem = Type.Object({
  component: Type.String(),
  x: Type.Number(),
  y: Type.Number(),
  angle: Type.Number(),
  designator: Type.Optional(Type.String({ maxLength: 64, description: 'Reference designator (R1, C3…), when the order carries it' })),
})
export type OrderItem = Static<typeof OrderItem>

export const Order = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: OrderStatus,
  created_at: Type.Number({ description: 'Seconds since epoch' }),
  updated_at: Type.Number({ description: 'Seconds since epoch' }),
  items: Type.Array(OrderItem),
  settings: Type.Record(Type.String(), Type.Unknown()),
})
export type Order = Static<typeof Order>

const CreateOrderBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  items: Type.Optional(Type.Array(OrderItem, { maxItems: 100_000 })),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
})
const ParseBody = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 255 }),
  encoding: Type.Literal('base64'),
  data: Type.String(),
})

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const RECENT_LIMIT = 10

export class OrderBook {
  private readonly orders = new Map<string, Order>()
  private sequence = 0

  constructor(private readonly clock: Clock) {}

  create(name: string, items: OrderItem[], settings: Record<string, unknown>): Order {
    const now = toSeconds(this.clock.now())
    const id = `ord-${String(++this.sequence).padStart(4, '0')}`
    const order: Order = { id, name, status: 'pending', created_at: now, updated_at: now, items, settings }
    this.orders.set(id, order)
    return order
  }

  get(id: string): Order | undefined {
    return this.orders.get(id)
  }

  require(id: string): Order {
    const order = this.orders.get(id)
    if (!order) throw notFound('order', id)
    return order
  }

  /** Newest first. */
  list(): Order[] {
    return [...this.orders.values()].reverse()
  }

  /** Orders that ran or were closed, most recently touched first. */
  recent(): Order[] {
    return this.list()
      .filter((o) => o.status !== 'pending')
      .sort((a, b) => b.updated_at - a.updated_at)
      .slice(0, RECENT_LIMIT)
  }

  latestPending(): Order | undefined {
    return this.list().find((o) => o.status === 'pending')
  }

  setStatus(order: Order, status: OrderStatus): void {
    order.status = status
    order.updated_at = toSeconds(this.clock.now())
  }

  delete(id: string): boolean {
    return this.orders.delete(id)
  }
}

export function registerOrderRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { orders, tasks } = machine

  routes.get('/orders', () => ok({ orders: orders.list() }))
  routes.get('/orders/recent', () => ok({ orders: orders.recent() }))
  routes.get('/orders/:oid', ({ params }) => ok({ order: orders.require(params.oid!) }))

  routes.post('/orders', ({ body }) => {
    const input = parseBody(CreateOrderBody, body)
    return created({ order: orders.create(input.name, input.items ?? [], input.settings ?? {}) })
  })

  routes.post('/orders/parse', ({ body }) => {
    const input = parseBody(ParseBody, body)
    const data = input.data.replace(/\s+/g, '')
    if (!BASE64.test(data)) throw new RouteError(400, 'bad_request', 'data is not valid base64')
    try {
      return ok({ parsed: parsePlacementFile(input.filename, Buffer.from(data, 'base64')) })
    } catch (err) {
      if (err instanceof PlacementError) throw new RouteError(400, 'unreadable_file', err.message)
      throw err
    }
  })

  routes.post('/orders/:oid/cancel', ({ params }) => {
    const order = orders.require(params.oid!)
    if (order.status === 'done' || order.status === 'cancelled') {
      throw conflict('order_closed', `order ${order.id} is already ${order.status}`)
    }
    if (tasks.activeOrderId() === order.id) tasks.stop()
    orders.setStatus(order, 'cancelled')
    return ok({ cancelled: true, order })
  })

  routes.delete('/orders/:oid', ({ params }) => {
    const order = orders.require(params.oid!)
    if (tasks.activeOrderId() === order.id) throw conflict('order_in_use', `order ${order.id} is being placed; stop the task first`)
    orders.delete(order.id)
    return ok({ deleted: true, id: order.id })
  })
}
