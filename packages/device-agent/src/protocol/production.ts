import { Type, type Static } from '@sinclair/typebox'

/**
 * Production reporting on the device link (contract §16, §4 step 7): the machine's events, shaped
 * after IPC-CFX (IPC-2591) and SEMI E10, and the gateway's acknowledgement. One definition for the
 * gateway and the device agent.
 */

/** Events in one `production` frame: 1–500. */
export const MAX_PRODUCTION_EVENTS_PER_FRAME = 500
/** `production` frames a machine may have unacknowledged at once; the gateway stops reading beyond. */
export const MAX_UNACKED_PRODUCTION_FRAMES = 64

/** SEMI E10 states a machine reports (`offline` is the gateway's own, for a closed link). */
export const MACHINE_STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled'] as const
export type MachineState = (typeof MACHINE_STATES)[number]

export const FAULT_KINDS = ['pickup_error', 'vision_error', 'placement_error', 'parts_exhausted', 'nozzle_error', 'collision', 'emergency_stop', 'other'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export const JOB_RESULTS = ['completed', 'stopped', 'failed'] as const
export type JobResult = (typeof JOB_RESULTS)[number]

export const PRODUCTION_EVENT_KINDS = ['state', 'job_started', 'job_ended', 'placements', 'fault'] as const
export type ProductionEventKind = (typeof PRODUCTION_EVENT_KINDS)[number]

const literals = <T extends readonly string[]>(values: T, description?: string) => Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {})

const EventId = Type.String({ minLength: 1, maxLength: 64, description: 'Unique per machine; a repeated id is stored once' })
const Ts = Type.Number({ minimum: 0, description: 'Seconds since epoch, fractional allowed' })
const Count = Type.Integer({ minimum: 0 })
const JobId = Type.String({ minLength: 1, maxLength: 64 })

const common = { id: EventId, ts: Ts }

export const StateEvent = Type.Object(
  {
    ...common,
    kind: Type.Literal('state'),
    state: literals(MACHINE_STATES, 'SEMI E10 state, from ts until the next state event by ts'),
    reason: Type.Optional(Type.String({ maxLength: 64, description: 'e.g. parts_exhausted, no_product, setup' })),
  },
  { title: 'StateEvent' },
)
export type StateEvent = Static<typeof StateEvent>

export const JobStartedEvent = Type.Object(
  {
    ...common,
    kind: Type.Literal('job_started'),
    job_id: JobId,
    order_id: Type.Optional(Type.String({ maxLength: 256 })),
    program: Type.Optional(Type.String({ maxLength: 256 })),
    boards_planned: Type.Optional(Count),
  },
  { title: 'JobStartedEvent' },
)
export type JobStartedEvent = Static<typeof JobStartedEvent>

export const JobEndedEvent = Type.Object(
  { ...common, kind: Type.Literal('job_ended'), job_id: JobId, result: literals(JOB_RESULTS), boards_done: Count },
  { title: 'JobEndedEvent' },
)
export type JobEndedEvent = Static<typeof JobEndedEvent>

const Name = Type.String({ minLength: 1, maxLength: 64 })
export const FeederCount = Type.Object({ feeder: Name, placed: Count, missed: Count })
export type FeederCount = Static<typeof FeederCount>
export const NozzleCount = Type.Object({ nozzle: Name, placed: Count, missed: Count })
export type NozzleCount = Static<typeof NozzleCount>

export const PlacementsEvent = Type.Object(
  {
    ...common,
    kind: Type.Literal('placements'),
    placed: Count,
    missed: Type.Integer({ minimum: 0, description: 'Parts picked or tried but not placed: pick-up, vision or placement rejects' }),
    job_id: Type.Optional(JobId),
    feeders: Type.Optional(Type.Array(FeederCount)),
    nozzles: Type.Optional(Type.Array(NozzleCount)),
  },
  { title: 'PlacementsEvent', description: 'Counted at ts' },
)
export type PlacementsEvent = Static<typeof PlacementsEvent>

export const FaultEvent = Type.Object(
  {
    ...common,
    kind: Type.Literal('fault'),
    fault: literals(FAULT_KINDS),
    feeder: Type.Optional(Type.String({ maxLength: 64 })),
    nozzle: Type.Optional(Type.String({ maxLength: 64 })),
    designator: Type.Optional(Type.String({ maxLength: 64 })),
    part: Type.Optional(Type.String({ maxLength: 256 })),
    message: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { title: 'FaultEvent' },
)
export type FaultEvent = Static<typeof FaultEvent>

/** One production event as contract §16 defines it, by `kind`. */
export const ProductionEvent = Type.Union([StateEvent, JobStartedEvent, JobEndedEvent, PlacementsEvent, FaultEvent], { title: 'ProductionEvent' })
export type ProductionEvent = Static<typeof ProductionEvent>

/**
 * Device → gateway. The frame's own shape (an `events` array of 1–500 objects, each with a string
 * `id` of 1–64 characters) closes the link with 4400 when wrong; each event is then checked against
 * `ProductionEvent` and a bad one is `rejected` in the acknowledgement, not a reason to close.
 */
export const ProductionFrame = Type.Object(
  {
    type: Type.Literal('production'),
    events: Type.Array(Type.Object({ id: EventId }, { additionalProperties: true }), { minItems: 1, maxItems: MAX_PRODUCTION_EVENTS_PER_FRAME }),
  },
  { title: 'ProductionFrame', description: 'Device → gateway: production events (contract §16)' },
)
export type ProductionFrame = Static<typeof ProductionFrame>

export const RejectedEvent = Type.Object({ id: Type.String(), error: Type.String({ description: 'Why the event was not stored' }) })
export type RejectedEvent = Static<typeof RejectedEvent>

export const ProductionAckFrame = Type.Object(
  {
    type: Type.Literal('production-ack'),
    ids: Type.Array(Type.String(), { description: 'Every event of the frame stored now or before' }),
    rejected: Type.Optional(Type.Array(RejectedEvent, { description: 'Events not stored, with the reason; not to be sent again' })),
  },
  { title: 'ProductionAckFrame', description: 'Gateway → device, once the accepted events are durably stored (contract §16)' },
)
export type ProductionAckFrame = Static<typeof ProductionAckFrame>
