import { Type, type TSchema } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { E10_STATES } from './production-figures.js'

const Ratio = (description: string) => Type.Union([Type.Number(), Type.Null()], { description: `${description}; null when its divisor is 0 or unknown; not capped at 1` })

export const Window = Type.Object({
  from: Type.Optional(Type.Number({ minimum: 0, description: 'Window start, seconds since epoch (default: `to` − 24 h)' })),
  to: Type.Optional(Type.Number({ minimum: 0, description: 'Window end, exclusive (default: now); at most 400 days after `from`' })),
})

export const SeriesQuery = Type.Composite([
  Window,
  Type.Object({
    bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { description: 'Bucket length, aligned to UTC (default hour); at most 1,000 buckets' })),
  }),
])

export const JobsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  after: Type.Optional(Id('Cursor: the next_after of the previous page')),
})

export const FleetQuery = Type.Composite([
  Window,
  Type.Object({
    selector: Type.Optional(Type.String({ maxLength: 4096, description: 'Only machines matching this label selector (§15)' })),
    group_by: Type.Optional(Type.String({ maxLength: 80, description: '`device` (default) or `label:<key>`' })),
  }),
])

export const StateSecondsSchema = Type.Object(
  Object.fromEntries([...E10_STATES, 'offline'].map((s) => [s, Type.Number({ minimum: 0 })])) as Record<(typeof E10_STATES)[number] | 'offline', ReturnType<typeof Type.Number>>,
  { description: 'Seconds in each SEMI E10 state and offline, within the window’s part before now' },
)

const Part = <K extends string>(key: K) =>
  Type.Object({
    [key]: Type.String(),
    placed: Type.Integer(),
    missed: Type.Integer(),
    miss_rate: Type.Union([Type.Number(), Type.Null()], { description: 'missed ÷ (placed + missed)' }),
  } as Record<K | 'placed' | 'missed' | 'miss_rate', TSchema>)

const Ratios = {
  cph: Ratio('Placements per productive hour'),
  availability: Ratio('productive ÷ planned seconds'),
  performance: Ratio('cph ÷ rated_cph'),
  quality: Ratio('placed ÷ (placed + missed)'),
  oee: Ratio('availability × performance × quality'),
}

const MachineFigures = {
  seconds: StateSecondsSchema,
  placed: Type.Integer(),
  missed: Type.Integer(),
  ...Ratios,
  faults: Type.Record(Type.String(), Type.Integer(), { description: 'Fault events per fault' }),
  feeders: Type.Array(Part('feeder'), { description: 'By miss rate, then missed, both descending' }),
  nozzles: Type.Array(Part('nozzle'), { description: 'By miss rate, then missed, both descending' }),
  jobs_completed: Type.Integer(),
}

export const MachineProductionAnswer = Type.Object({
  success: Type.Boolean(),
  device_id: Type.String(),
  from: Type.Number(),
  to: Type.Number(),
  rated_cph: Type.Union([Type.Integer(), Type.Null()]),
  state: Type.Union(
    [
      Type.Object({
        state: Type.String({ description: 'One of the six SEMI E10 states, or `offline` (its link closed)' }),
        reason: Type.Union([Type.String(), Type.Null()], { description: 'The state event’s reason; null when none' }),
        since: Type.Number({ description: 'When the machine entered the state (s since epoch), as `at` of `machine-state`' }),
      }),
      Type.Null(),
    ],
    { description: 'The machine’s current state now, whatever the window (fleetgate addition); null when it never reported one' },
  ),
  ...MachineFigures,
})

export const SeriesAnswer = Type.Object({
  success: Type.Boolean(),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  buckets: Type.Array(Type.Object({ start: Type.Number({ description: 'Bucket start, aligned to UTC' }), ...MachineFigures }), { description: 'Oldest first; buckets after now are left out' }),
})

export const JobsAnswer = Type.Object({
  success: Type.Boolean(),
  jobs: Type.Array(
    Type.Object({
      job_id: Type.String(),
      order_id: Type.Union([Type.String(), Type.Null()]),
      program: Type.Union([Type.String(), Type.Null()]),
      started_at: Type.Union([Type.Number(), Type.Null()]),
      ended_at: Type.Union([Type.Number(), Type.Null()], { description: 'null while the job runs' }),
      result: Type.Union([Type.String(), Type.Null()], { description: 'completed, stopped or failed; null while the job runs' }),
      boards_planned: Type.Union([Type.Integer(), Type.Null()]),
      boards_done: Type.Union([Type.Integer(), Type.Null()]),
      placed: Type.Integer(),
      missed: Type.Integer(),
    }),
    { description: 'Newest first' },
  ),
  next_after: Type.Optional(Type.String()),
})

const GroupFields = {
  devices: Type.Integer({ description: 'Machines in the group' }),
  seconds: StateSecondsSchema,
  placed: Type.Integer(),
  missed: Type.Integer(),
  ...Ratios,
  performance: Ratio('Σ placed ÷ Σ (rated_cph × productive hours), over the machines that have a rated_cph'),
}

export const FleetAnswer = Type.Object({
  success: Type.Boolean(),
  from: Type.Number(),
  to: Type.Number(),
  groups: Type.Array(Type.Object({ key: Type.Union([Type.String(), Type.Null()], { description: 'Machine id, or label value (null: machines without the label)' }), ...GroupFields })),
  total: Type.Object(GroupFields),
})
