import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'

/**
 * Production reporting on the device link (contract §16): events shaped after IPC-CFX and
 * SEMI E10, sent in `production` frames and answered by `production-ack` once stored. The frame
 * schema checks only what makes a frame well-formed (an `events` array of 1–500 objects with an
 * `id`); each event is then checked on its own (`productionEventError`), so one bad event is
 * rejected alone.
 */

export const MAX_PRODUCTION_EVENTS = 500
/** The largest count an event may carry: the gateway stores counts as 32-bit integers. */
export const MAX_PRODUCTION_COUNT = 2_147_483_647

/** SEMI E10 states a machine reports; `offline` is the gateway's own (link closed, or before the first state). */
export const MACHINE_STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled'] as const
export type MachineState = (typeof MACHINE_STATES)[number]
export const JOB_RESULTS = ['completed', 'stopped', 'failed'] as const
export const FAULT_KINDS = ['pickup_error', 'vision_error', 'placement_error', 'parts_exhausted', 'nozzle_error', 'collision', 'emergency_stop', 'other'] as const
export const PRODUCTION_EVENT_KINDS = ['state', 'job_started', 'job_ended', 'placements', 'fault'] as const
export type ProductionEventKind = (typeof PRODUCTION_EVENT_KINDS)[number]

const Count = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_PRODUCTION_COUNT, description })
const Name = (description: string) => Type.String({ maxLength: 64, description })

const EventBase = {
  id: Type.String({ minLength: 1, maxLength: 64, description: 'Unique per machine; a repeated id is stored once' }),
  ts: Type.Number({ description: 'When it happened, seconds since epoch (fractional allowed); at most 30 days old, at most 5 minutes ahead' }),
}

export const StateEvent = Type.Object(
  {
    ...EventBase,
    kind: Type.Literal('state'),
    state: Type.Union(
      MACHINE_STATES.map((s) => Type.Literal(s)),
      { description: 'SEMI E10 state, from ts until the next state event by ts' },
    ),
    reason: Type.Optional(Name('e.g. parts_exhausted, no_product, setup')),
  },
  { title: 'ProductionStateEvent' },
)
export type StateEvent = Static<typeof StateEvent>

export const JobStartedEvent = Type.Object(
  {
    ...EventBase,
    kind: Type.Literal('job_started'),
    job_id: Name('The job'),
    order_id: Type.Optional(Type.String()),
    program: Type.Optional(Type.String()),
    boards_planned: Type.Optional(Count('Boards the job is to place')),
  },
  { title: 'ProductionJobStartedEvent' },
)
export type JobStartedEvent = Static<typeof JobStartedEvent>

export const JobEndedEvent = Type.Object(
  {
    ...EventBase,
    kind: Type.Literal('job_ended'),
    job_id: Name('The job'),
    result: Type.Union(JOB_RESULTS.map((r) => Type.Literal(r))),
    boards_done: Count('Boards finished'),
  },
  { title: 'ProductionJobEndedEvent' },
)
export type JobEndedEvent = Static<typeof JobEndedEvent>

const PartCounts = (key: 'feeder' | 'nozzle') =>
  Type.Array(Type.Object({ [key]: Name(`The ${key}`), placed: Count('Parts placed'), missed: Count('Parts picked or tried but not placed') }), {
    description: `Counts per ${key}`,
  })
export interface PartCount {
  placed: number
  missed: number
}

export const PlacementsEvent = Type.Object(
  {
    ...EventBase,
    kind: Type.Literal('placements'),
    placed: Count('Parts placed since the previous placements event'),
    missed: Count('Parts picked or tried but not placed: pick-up, vision or placement rejects'),
    job_id: Type.Optional(Name('The job they were placed for')),
    feeders: Type.Optional(PartCounts('feeder')),
    nozzles: Type.Optional(PartCounts('nozzle')),
  },
  { title: 'ProductionPlacementsEvent' },
)
export type PlacementsEvent = Omit<Static<typeof PlacementsEvent>, 'feeders' | 'nozzles'> & {
  feeders?: (PartCount & { feeder: string })[]
  nozzles?: (PartCount & { nozzle: string })[]
}

export const FaultEvent = Type.Object(
  {
    ...EventBase,
    kind: Type.Literal('fault'),
    fault: Type.Union(FAULT_KINDS.map((f) => Type.Literal(f))),
    feeder: Type.Optional(Type.String()),
    nozzle: Type.Optional(Type.String()),
    designator: Type.Optional(Type.String()),
    part: Type.Optional(Type.String()),
    message: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { title: 'ProductionFaultEvent' },
)
export type FaultEvent = Static<typeof FaultEvent>

export const ProductionEvent = Type.Union([StateEvent, JobStartedEvent, JobEndedEvent, PlacementsEvent, FaultEvent], { title: 'ProductionEvent' })
export type ProductionEvent = StateEvent | JobStartedEvent | JobEndedEvent | PlacementsEvent | FaultEvent

export const ProductionFrame = Type.Object(
  {
    type: Type.Literal('production'),
    events: Type.Array(Type.Object({ id: EventBase.id }), {
      minItems: 1,
      maxItems: MAX_PRODUCTION_EVENTS,
      description: 'Each a ProductionEvent; each is checked on its own and a bad one is rejected alone',
    }),
  },
  { title: 'ProductionFrame', description: 'Device → gateway: production events (contract §16), answered by production-ack once stored' },
)
/** The frame as parsed: each event is still to be checked with `productionEventError`. */
export type ProductionFrame = { type: 'production'; events: ({ id: string } & Record<string, unknown>)[] }

export const ProductionAckFrame = Type.Object(
  {
    type: Type.Literal('production-ack'),
    ids: Type.Array(Type.String(), { description: 'Every event of the frame stored by it or already stored before' }),
    rejected: Type.Array(Type.Object({ id: Type.String(), error: Type.String() }), { description: 'Events not stored, with the reason; sending them again is pointless' }),
  },
  { title: 'ProductionAckFrame', description: 'Gateway → device: the answer to a production frame, sent once its events are durably stored' },
)
export type ProductionAckFrame = Static<typeof ProductionAckFrame>

const CHECKERS = Object.fromEntries(
  ([
    ['state', StateEvent],
    ['job_started', JobStartedEvent],
    ['job_ended', JobEndedEvent],
    ['placements', PlacementsEvent],
    ['fault', FaultEvent],
  ] as [ProductionEventKind, TSchema][]).map(([kind, schema]) => [kind, TypeCompiler.Compile(schema)]),
) as Record<ProductionEventKind, ReturnType<typeof TypeCompiler.Compile>>

/**
 * Why one event of a production frame cannot be stored, as a sentence naming the field; undefined
 * when its shape is right. The time window of `ts` (30 days back, 5 minutes ahead) is the
 * gateway's to check, against the database's clock.
 */
export function productionEventError(event: Record<string, unknown>): string | undefined {
  const kind = event.kind
  if (typeof kind !== 'string' || !(PRODUCTION_EVENT_KINDS as readonly string[]).includes(kind)) {
    return `unknown kind ${JSON.stringify(kind ?? null)}; expected one of ${PRODUCTION_EVENT_KINDS.join(', ')}`
  }
  const checker = CHECKERS[kind as ProductionEventKind]
  if (checker.Check(event)) return undefined
  const first = checker.Errors(event).First()
  const where = first?.path ? first.path.slice(1).replaceAll('/', '.') : 'event'
  return `${kind} event: ${where || 'event'}: ${first?.message ?? 'does not match the schema'}`
}
