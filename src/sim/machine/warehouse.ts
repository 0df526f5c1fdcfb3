import { Type, type Static } from '@sinclair/typebox'
import { ID_PATTERN } from '@fleetgate/device-agent/protocol'
import { created, ok, type RouteTable } from '@fleetgate/device-agent'
import type { PickAndPlaceMachine } from './machine.js'
import type { Order } from './orders.js'
import { conflict, notFound, parseBody, queryValue } from './validate-body.js'

export const FEEDER_SLOT_COUNT = 12

export const Component = Type.Object({
  id: Type.String(),
  name: Type.String(),
  value: Type.String(),
  package: Type.String(),
  part_number: Type.String(),
  stock: Type.Integer({ minimum: 0 }),
  feeder_slot: Type.Union([Type.Integer({ minimum: 1, maximum: FEEDER_SLOT_COUNT }), Type.Null()]),
})
export type Component = Static<typeof Component>

const ComponentFields = {
  name: Type.String({ minLength: 1, maxLength: 128 }),
  value: Type.Optional(Type.String({ maxLength: 128 })),
  package: Type.Optional(Type.String({ maxLength: 128 })),
  part_number: Type.Optional(Type.String({ maxLength: 128 })),
  stock: Type.Optional(Type.Integer({ minimum: 0 })),
  feeder_slot: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: FEEDER_SLOT_COUNT }), Type.Null()])),
}
const CreateComponentBody = Type.Object({ id: Type.Optional(Type.String({ pattern: ID_PATTERN })), ...ComponentFields })
const UpdateComponentBody = Type.Partial(Type.Object(ComponentFields))
const CheckBomBody = Type.Object({
  order_id: Type.Optional(Type.String()),
  items: Type.Optional(Type.Array(Type.Object({ component: Type.String(), quantity: Type.Integer({ minimum: 1 }) }))),
})

const STARTER_LIBRARY: Component[] = [
  { id: 'cmp-r10k', name: 'R 10k 0603', value: '10k', package: 'R_0603_1608Metric', part_number: 'RC0603FR-0710KL', stock: 5000, feeder_slot: 1 },
  { id: 'cmp-r4k7', name: 'R 4k7 0603', value: '4k7', package: 'R_0603_1608Metric', part_number: 'RC0603FR-074K7L', stock: 4000, feeder_slot: 2 },
  { id: 'cmp-c100n', name: 'C 100nF 0603', value: '100nF', package: 'C_0603_1608Metric', part_number: 'CL10B104KB8NNNC', stock: 8000, feeder_slot: 3 },
  { id: 'cmp-c10u', name: 'C 10uF 0805', value: '10uF', package: 'C_0805_2012Metric', part_number: 'CL21A106KAYNNNE', stock: 1500, feeder_slot: 4 },
  { id: 'cmp-led-g', name: 'LED green 0603', value: 'LED_Green', package: 'LED_0603_1608Metric', part_number: 'KT-0603G', stock: 600, feeder_slot: 5 },
  { id: 'cmp-stm32', name: 'STM32F103C8T6', value: 'STM32F103C8Tx', package: 'LQFP-48_7x7mm_P0.5mm', part_number: 'STM32F103C8T6', stock: 25, feeder_slot: 6 },
  { id: 'cmp-ne555', name: 'NE555 timer', value: 'NE555', package: 'SOIC-8_3.9x4.9mm_P1.27mm', part_number: 'NE555DR', stock: 0, feeder_slot: null },
]

/** The component library, with stock and the feeder slot each reel sits in. */
export class Warehouse {
  private readonly components = new Map<string, Component>(STARTER_LIBRARY.map((c) => [c.id, { ...c }]))
  private sequence = 0

  list(): Component[] {
    return [...this.components.values()]
  }

  require(id: string): Component {
    const component = this.components.get(id)
    if (!component) throw notFound('component', id)
    return component
  }

  create(input: Static<typeof CreateComponentBody>): Component {
    const id = input.id ?? this.nextId()
    if (this.components.has(id)) throw conflict('component_exists', `component ${id} already exists`)
    this.assertSlotFree(input.feeder_slot ?? null, id)
    const component: Component = {
      id,
      name: input.name,
      value: input.value ?? '',
      package: input.package ?? '',
      part_number: input.part_number ?? '',
      stock: input.stock ?? 0,
      feeder_slot: input.feeder_slot ?? null,
    }
    this.components.set(id, component)
    return component
  }

  update(id: string, patch: Static<typeof UpdateComponentBody>): Component {
    const component = this.require(id)
    if (patch.feeder_slot !== undefined) this.assertSlotFree(patch.feeder_slot, id)
    Object.assign(component, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)))
    return component
  }

  delete(id: string): void {
    this.require(id)
    this.components.delete(id)
  }

  /** The library entry an order item names, by id, name or value (case-insensitive). */
  match(name: string): Component | undefined {
    const wanted = name.toLowerCase()
    return this.components.get(name) ?? this.list().find((c) => c.name.toLowerCase() === wanted || c.value.toLowerCase() === wanted)
  }

  /**
   * Takes one part for a placement. False when the part sits in a feeder that has run empty: the
   * machine cannot place it until the feeder is refilled. Parts in no feeder (or not in the
   * library) are taken from nowhere, as before.
   */
  take(name: string): boolean {
    const component = this.match(name)
    if (!component) return true
    if (component.stock > 0) {
      component.stock--
      return true
    }
    return component.feeder_slot === null
  }

  bom(order: Order) {
    const needed = new Map<string, number>()
    for (const item of order.items) needed.set(item.component, (needed.get(item.component) ?? 0) + 1)
    return this.availability([...needed].map(([component, quantity]) => ({ component, quantity })))
  }

  availability(lines: { component: string; quantity: number }[]) {
    return lines.map(({ component, quantity }) => {
      const match = this.match(component)
      const inStock = match?.stock ?? 0
      return {
        component,
        quantity,
        component_id: match?.id ?? null,
        in_stock: inStock,
        feeder_slot: match?.feeder_slot ?? null,
        sufficient: inStock >= quantity,
      }
    })
  }

  feederSlots() {
    return Array.from({ length: FEEDER_SLOT_COUNT }, (_, i) => {
      const slot = i + 1
      const component = this.list().find((c) => c.feeder_slot === slot)
      return {
        slot,
        component_id: component?.id ?? null,
        component_name: component?.name ?? null,
        loaded: component !== undefined,
        remaining: component?.stock ?? 0,
        tape_width_mm: slot <= 10 ? 8 : 12,
        kind: slot === 6 ? 'tray' : 'tape',
      }
    })
  }

  private assertSlotFree(slot: number | null, id: string): void {
    if (slot === null) return
    const holder = this.list().find((c) => c.feeder_slot === slot && c.id !== id)
    if (holder) throw conflict('slot_occupied', `feeder slot ${slot} holds ${holder.id}`)
  }

  private nextId(): string {
    let id: string
    do id = `cmp-${String(++this.sequence).padStart(4, '0')}`
    while (this.components.has(id))
    return id
  }
}

export function registerWarehouseRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { warehouse, orders } = machine
  /** The order a BOM question is about: the one named, else the active one, else the latest pending. */
  const orderFor = (orderId: string | undefined): Order | undefined => {
    if (orderId !== undefined) return orders.require(orderId)
    const active = machine.tasks.activeOrderId()
    return active ? orders.get(active) : orders.latestPending()
  }

  routes.get('/warehouse/components', () => ok({ components: warehouse.list() }))
  routes.get('/warehouse/components/:cid', ({ params }) => ok({ component: warehouse.require(params.cid!) }))
  routes.post('/warehouse/components', ({ body }) => created({ component: warehouse.create(parseBody(CreateComponentBody, body)) }))
  routes.put('/warehouse/components/:cid', ({ params, body }) => ok({ component: warehouse.update(params.cid!, parseBody(UpdateComponentBody, body)) }))
  routes.delete('/warehouse/components/:cid', ({ params }) => {
    warehouse.delete(params.cid!)
    return ok({ deleted: true, id: params.cid })
  })

  routes.get('/warehouse/bom', ({ query }) => {
    const order = orderFor(queryValue(query, 'order_id'))
    return ok({ bom: { order_id: order?.id ?? null, items: order ? warehouse.bom(order) : [] } })
  })

  routes.post('/warehouse/check-bom', ({ body }) => {
    const input = parseBody(CheckBomBody, body)
    const order = input.items ? undefined : orderFor(input.order_id)
    const items = input.items ? warehouse.availability(input.items) : order ? warehouse.bom(order) : []
    const missing = items.filter((i) => !i.sufficient).map((i) => ({ component: i.component, needed: i.quantity, in_stock: i.in_stock }))
    return ok({ ok: missing.length === 0, order_id: order?.id ?? null, items, missing })
  })

  routes.get('/warehouse/order-availability', ({ query }) => {
    const order = orderFor(queryValue(query, 'order_id'))
    if (!order) return ok({ order_id: null, available: false, items: [], reason: 'no order' })
    const items = warehouse.bom(order)
    return ok({ order_id: order.id, available: items.every((i) => i.sufficient), items })
  })

  routes.get('/warehouse/feeder-slots', () => ok({ slots: warehouse.feederSlots() }))
}
