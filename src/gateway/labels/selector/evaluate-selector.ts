import type { Operator, Requirement, Selector, Subject } from './selector-syntax.js'

/** What a selector can see of a machine. */
export interface SelectableMachine {
  readonly labels: Readonly<Record<string, string>>
  /** The registration's `version`. */
  readonly version: string
  /** The last heartbeat status's `firmware` when it is a string (see `reportedFirmware`). */
  readonly firmware: string | undefined
  readonly online: boolean
}

/** Whether every requirement of `selector` holds for `machine` (the empty selector: always). */
export function selectorMatches(selector: Pick<Selector, 'requirements'>, machine: SelectableMachine): boolean {
  return selector.requirements.every((requirement) => requirementHolds(requirement, subjectValue(requirement.subject, machine)))
}

/** A subject's value on a machine; undefined when the machine has no such label or reported no firmware. */
function subjectValue(subject: Subject, machine: SelectableMachine): string | undefined {
  // Own properties only: `constructor` is a valid label key.
  if ('label' in subject) return Object.hasOwn(machine.labels, subject.label) ? machine.labels[subject.label] : undefined
  switch (subject.field) {
    case 'version':
      return machine.version
    case 'firmware':
      return machine.firmware
    case 'online':
      return String(machine.online)
  }
}

const OPERATORS: Record<Operator, (value: string | undefined, values: readonly string[]) => boolean> = {
  eq: (value, values) => value !== undefined && value === values[0],
  neq: (value, values) => value === undefined || value !== values[0],
  in: (value, values) => value !== undefined && values.includes(value),
  notin: (value, values) => value === undefined || !values.includes(value),
  exists: (value) => value !== undefined,
  absent: (value) => value === undefined,
}

function requirementHolds({ op, values }: Requirement, value: string | undefined): boolean {
  return OPERATORS[op](value, values)
}
