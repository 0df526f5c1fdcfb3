import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { GATE_STATES } from './kpi-gate.js'
import { PAUSE_REASONS } from './pause-reasons.js'
import { MACHINE_STATES, RolloutCounts, ROLLOUT_STATES } from './rollout-states.js'

export const DEFAULT_STAGES = [10, 100]
export const DEFAULT_MAX_FAILURE_RATIO = 0.1
/** Machines one rollout may target (the fleet-scale target). */
export const MAX_TARGETED = 100_000

export const CreateRolloutBody = Type.Object({
  release_id: Id('A published or active release'),
  devices: Type.Optional(
    Type.Array(Id('Machine id'), { minItems: 1, maxItems: MAX_TARGETED, description: 'Machines to update; default: every known machine' }),
  ),
  selector: Type.Optional(
    Type.String({ maxLength: 4096, description: 'Instead of devices: the machines matching this label selector now (§15); the membership is fixed at creation' }),
  ),
  stages: Type.Optional(
    Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
      minItems: 1,
      maxItems: 20,
      description: 'Strictly ascending percentages of the targeted machines, the last 100 (default [10, 100])',
    }),
  ),
  max_failure_ratio: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'A stage whose failed share exceeds this pauses the rollout (default 0.1)' })),
  soak_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86400, description: 'Wait after a stage ends before the next opens (default 0)' })),
  kpi_gate: Type.Optional(
    Type.Object(
      {
        max_miss_rate_increase: Type.Number({ minimum: 0, maximum: 1, description: 'The ended stage’s miss rate after installing minus before the offer may be at most this' }),
        min_placements: Type.Optional(Type.Integer({ minimum: 1, description: 'Placements (placed + missed) each machine makes after installing before it counts (default 1000)' })),
        wait_seconds: Type.Optional(Type.Number({ minimum: 0, description: 'After this long since the stage ended, only machines with enough placements count (default 86400)' })),
      },
      { additionalProperties: false, description: 'Watch production (§16): pause with kpi_regression when the miss rate rises' },
    ),
  ),
})

export const KpiGateSchema = Type.Object({
  max_miss_rate_increase: Type.Number(),
  min_placements: Type.Integer(),
  wait_seconds: Type.Number(),
})

export const Rollout = Type.Object({
  rollout_id: Type.String(),
  release_id: Type.String(),
  display_version: Type.String(),
  state: Type.Union(ROLLOUT_STATES.map((s) => Type.Literal(s))),
  stage: Type.Integer({ description: 'Index of the open stage' }),
  stages: Type.Array(Type.Integer()),
  max_failure_ratio: Type.Number(),
  soak_seconds: Type.Number(),
  created_at: Type.Number({ description: 'Seconds since epoch' }),
  created_by: Type.String(),
  selector: Type.Union([Type.String(), Type.Null()], { description: 'The selector the machines were resolved from; null when created from ids or every machine' }),
  kpi_gate: Type.Union([KpiGateSchema, Type.Null()], { description: 'The KPI gate given at creation (§16), with its defaults; null: none' }),
  gate: Type.Union([...GATE_STATES.map((s) => Type.Literal(s)), Type.Null()], {
    description: 'The KPI gate of the open stage once it ended: waiting (for placements), passed, regression; null before it ended or without a gate',
  }),
  pause_reason: Type.Union([...PAUSE_REASONS.map((s) => Type.Literal(s)), Type.Null()], {
    description: 'Why a paused rollout is paused: manual (an administrator), failures (max_failure_ratio), kpi_regression (the KPI gate); null unless paused',
  }),
  counts: RolloutCounts,
  targeted: Type.Integer(),
})

export const RolloutMachine = Type.Object({
  device_id: Type.String(),
  stage: Type.Integer(),
  state: Type.Union(MACHINE_STATES.map((s) => Type.Literal(s))),
  progress: Type.Union([Type.Number(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.Number({ description: 'Seconds since epoch' }),
})

export const RolloutAnswer = Type.Object({ success: Type.Boolean(), rollout: Rollout })

export const RolloutList = Type.Object({
  success: Type.Boolean(),
  rollouts: Type.Array(Rollout),
  next_before: Type.Optional(Type.String()),
})

export const RolloutDetail = Type.Object({
  success: Type.Boolean(),
  rollout: Rollout,
  devices: Type.Array(RolloutMachine),
  next_after: Type.Optional(Type.String()),
})

export const RolloutIdParams = Type.Object({ rollout_id: Id('Rollout id') })

export const RolloutListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  before: Type.Optional(Id('Cursor: the last rollout id of the previous page')),
})

export const RolloutMachinesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  after: Type.Optional(Id('Cursor: the last machine id of the previous page')),
})
