import { Type, type Static, type TObject } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { eventSchemaName, type EventKind, type StreamedEvent } from './events/event-envelope.js'
import { BindingEvent } from './gateway/devices/binding-event.js'
import { DeviceEvent, DeviceStatusEvent } from './gateway/devices/device-events.js'
import { ReleaseEvent } from './gateway/releases/release-event.js'
import { RolloutDeviceEvent, RolloutEvent } from './gateway/rollouts/rollout-events.js'
import { CommandEvent } from './platform/commands/command-event.js'
import { PlatformDeviceEvent } from './platform/devices/platform-device-event.js'
import { MachineStateEvent } from './gateway/production/ingest/machine-state-event.js'

/**
 * Every event of contract §11, gathered from the features that raise them. `events/` carries
 * and streams events without knowing the features; the features publish their own kinds; this
 * file, beside `app.ts`, is the only one that knows them all.
 */
export const FleetEvent = Type.Union([DeviceEvent, DeviceStatusEvent, BindingEvent, ReleaseEvent, PlatformDeviceEvent, CommandEvent, RolloutEvent, RolloutDeviceEvent, MachineStateEvent])
export type FleetEvent = Static<typeof FleetEvent>

const fleetEventCheck = TypeCompiler.Compile(FleetEvent)

/** A message from another instance is one of ours: a known kind with its data. */
export const isFleetEvent = (value: unknown): value is FleetEvent => fleetEventCheck.Check(value)

/** Each kind's `data` schema, named for /openapi.json (`components.schemas`). */
export const EVENT_DATA_SCHEMAS: Record<string, TObject> = Object.fromEntries(
  FleetEvent.anyOf.map((event) => [
    eventSchemaName(event.properties.kind.const),
    { ...event.properties.data, description: `\`data:\` of \`event: ${event.properties.kind.const}\` (GET /api/v1/events)` },
  ]),
)

/** Compile-time: the union covers every kind of §11, and every event carries what a stream filters on. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const complete: [Same<FleetEvent['kind'], EventKind>, FleetEvent extends StreamedEvent ? true : false] = [true, true]
void complete
