import { isPlainObject } from '../../../components/ui/forwarded-answer'

export const SWITCH_NAMES = ['pump', 'valve', 'light'] as const
export type SwitchName = (typeof SWITCH_NAMES)[number]

/** `true`, or `{state: true}` (a light with its brightness): a switch's state as a machine says it. */
function booleanState(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value
  if (isPlainObject(value) && typeof value.state === 'boolean') return value.state
  return undefined
}

/** The state a machine's heartbeat status reports for a switch (contract §10: booleans), else unknown. */
export function reportedState(status: unknown, name: SwitchName): boolean | undefined {
  return isPlainObject(status) ? booleanState(status[name]) : undefined
}

/**
 * The state a machine's answer to a set says the switch is in: `{pump: true}`, `{light: {state:
 * true, …}}` or `{state: true}`. Any other answer says nothing about it (undefined).
 */
export function answeredState(answer: unknown, name: SwitchName): boolean | undefined {
  if (!isPlainObject(answer)) return undefined
  return booleanState(answer[name]) ?? (typeof answer.state === 'boolean' ? answer.state : undefined)
}

/** The answer to a set, and the heartbeat that was the latest when it came. */
export interface SwitchAnswer {
  state: boolean
  /** The heartbeat status object shown when the answer came (the query cache keeps it by identity). */
  status: unknown
  lastHeartbeat: number | null
  /** When the answer came (epoch ms). */
  at: number
}

/**
 * A heartbeat shown this soon after an answer may have left the machine before the set: the gateway
 * sends `device-status` at most once a second, the latest status at the end of a busy second.
 */
export const ANSWER_HOLD_MS = 2_000

/**
 * What a switch shows: the newer of the machine's last heartbeat and its answer to the last set.
 * An answer holds until a heartbeat newer than it arrives (a new status from the event stream or a
 * later `last_heartbeat` from the overview, past ANSWER_HOLD_MS); unknown (undefined) until the
 * machine said anything.
 */
export function shownState(status: unknown, lastHeartbeat: number | null, name: SwitchName, answer: SwitchAnswer | undefined, now: number): boolean | undefined {
  if (answer && ((answer.status === status && answer.lastHeartbeat === lastHeartbeat) || now - answer.at < ANSWER_HOLD_MS)) return answer.state
  return reportedState(status, name)
}
