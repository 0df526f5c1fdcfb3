import { Type, type TObject } from '@sinclair/typebox'

/**
 * The kinds of contract §11: the `event:` names a stream writes. Each feature defines the `data`
 * of its kinds next to the code that raises them; `src/fleet-event.ts` gathers them.
 */
export const EVENT_KINDS = ['device', 'device-status', 'binding', 'release', 'platform-device', 'command', 'rollout', 'rollout-device', 'machine-state'] as const
export type EventKind = (typeof EVENT_KINDS)[number]

/** The name of a kind's `data` schema in /openapi.json's `components.schemas`: `device-status` → `DeviceStatusEvent`. */
export const eventSchemaName = (kind: EventKind) => `${kind.replace(/(?:^|-)(\w)/g, (_match, letter: string) => letter.toUpperCase())}Event`

/** One event as the bus carries it: `{kind, data}`; a stream writes `data` as the event's JSON. */
export interface EventEnvelope {
  kind: string
  data: object
}

/** The schema of one kind's events, from the schema of its `data`. */
export const eventSchema = <K extends EventKind, D extends TObject>(kind: K, data: D) => Type.Object({ kind: Type.Literal(kind), data })

/**
 * What a stream reads of an event to decide who sees it (contract §11, "who receives it"): the
 * device it is about, and for `binding` whose binding changed. Every feature's event fits this
 * (checked where the kinds are gathered).
 */
export type StreamedEvent =
  | { kind: 'device' | 'device-status' | 'machine-state' | 'platform-device' | 'command'; data: { device_id: string } }
  | { kind: 'binding'; data: { username: string; device_id: string; bound: boolean } }
  | { kind: 'release' | 'rollout' | 'rollout-device'; data: object }
