/**
 * A parsed selector (contract §15) and its canonical text. This file imports nothing and the
 * parser only its neighbours and label-rules.ts, so the web console can take them as they are.
 */

/** Reported fields a selector can test besides labels, spelled `@version`, `@firmware`, `@online`. */
export const SELECTOR_FIELDS = ['version', 'firmware', 'online'] as const
export type SelectorField = (typeof SELECTOR_FIELDS)[number]

export type Subject = { readonly label: string } | { readonly field: SelectorField }

/**
 * `eq` `=`/`==`, `neq` `!=`, `in`/`notin` a set, `exists` a bare key, `absent` `!key`. `neq` and
 * `notin` also hold for a machine without the key.
 */
export type Operator = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'absent'

export interface Requirement {
  readonly subject: Subject
  readonly op: Operator
  /** One value for `eq`/`neq`; a set (sorted, without duplicates) for `in`/`notin`; none for `exists`/`absent`. */
  readonly values: readonly string[]
  /** Where the requirement starts in the selector's text (0-based). */
  readonly position: number
}

export interface Selector {
  /** The text as given. */
  readonly text: string
  /** All must hold; none: every machine. */
  readonly requirements: readonly Requirement[]
}

export const MAX_SELECTOR_LENGTH = 4096
export const MAX_REQUIREMENTS = 64
export const MAX_SET_VALUES = 100

/** A malformed selector, with the 0-based position of the fault in its text (400 `invalid_selector`). */
export class SelectorError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message)
    this.name = 'SelectorError'
  }
}

export const subjectText = (subject: Subject): string => ('label' in subject ? subject.label : `@${subject.field}`)

/**
 * The canonical text of a selector: requirements in their order, joined by `,` without spaces;
 * `==` written `=`; sets sorted and without duplicates. Parsing it gives the same requirements
 * (positions aside), and formatting again gives the same text.
 */
export function formatSelector(selector: Pick<Selector, 'requirements'>): string {
  return selector.requirements.map(formatRequirement).join(',')
}

function formatRequirement({ subject, op, values }: Requirement): string {
  const name = subjectText(subject)
  switch (op) {
    case 'eq':
      return `${name}=${values[0]}`
    case 'neq':
      return `${name}!=${values[0]}`
    case 'in':
    case 'notin':
      return `${name} ${op} (${values.join(',')})`
    case 'exists':
      return name
    case 'absent':
      return `!${name}`
  }
}
