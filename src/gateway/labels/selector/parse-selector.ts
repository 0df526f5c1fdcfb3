/**
 * The selector language of contract §15: the Kubernetes label-selector syntax, plus the reported
 * fields `@version`, `@firmware` and `@online`.
 *
 *     selector    := ε | requirement (',' requirement)*
 *     requirement := '!' subject | subject [('=' | '==' | '!=') value | ('in' | 'notin') '(' value (',' value)* ')']
 *     subject     := label-key | '@version' | '@firmware' | '@online'
 *
 * Spaces (and tabs, newlines) around tokens are ignored; a selector of nothing else has no
 * requirement and matches every machine. `in`/`notin` are operators only after a subject, so
 * `in` is also a valid key. Every fault throws a `SelectorError` at its 0-based position.
 *
 * Decisions on the edges:
 * - `key=` and `key!=` compare with the empty value (a label value may be 0 characters). A value
 *   inside a set may not be empty: `in (a,)` is an error, not "a or empty".
 * - `in ()` is an error, as in Kubernetes. Duplicates in a set are accepted and dropped.
 * - Label keys and values must follow the label rules (label-rules.ts). `@version` and
 *   `@firmware` values follow the label value rule too: a reported value with other characters
 *   can only be matched by `!=`/`notin`/exists. `@online` takes only `true` or `false`.
 * - Every operator applies to the fields: `@version` and `@online` always exist (so `@version`
 *   holds for every machine, `!@version` for none); `@firmware` exists when the last heartbeat's
 *   status reported `firmware` as a string.
 * - The same subject may be required twice (`a=1,a=2` matches nothing); nothing is merged.
 * - Limits: at most 4096 characters, 64 requirements, 100 values in a set; beyond, an error at
 *   the first character, requirement or value over.
 * - Positions count UTF-16 code units. Everything before a fault is ASCII (any other character
 *   is itself a fault), so there they are character positions.
 */
import { isLabelKey, isLabelValue, LABEL_KEY_RULE, LABEL_VALUE_RULE } from '../label-rules.js'
import {
  MAX_REQUIREMENTS,
  MAX_SELECTOR_LENGTH,
  MAX_SET_VALUES,
  SELECTOR_FIELDS,
  SelectorError,
  subjectText,
  type Requirement,
  type Selector,
  type SelectorField,
  type Subject,
} from './selector-syntax.js'
import { tokenizeSelector, type Token } from './tokenize-selector.js'

export function parseSelector(text: string): Selector {
  if (text.length > MAX_SELECTOR_LENGTH) {
    throw new SelectorError(`selector longer than ${MAX_SELECTOR_LENGTH} characters at position ${MAX_SELECTOR_LENGTH}`, MAX_SELECTOR_LENGTH)
  }
  return { text, requirements: new SelectorParser(tokenizeSelector(text)).requirements() }
}

const FOUND_SHOWN = 32

function found(token: Token): string {
  if (token.kind === 'end') return 'end of selector'
  const characters = [...token.text]
  return `'${characters.length > FOUND_SHOWN ? `${characters.slice(0, FOUND_SHOWN).join('')}…` : token.text}'`
}

function fail(what: string, token: Token, detail = ''): never {
  throw new SelectorError(`${what} at position ${token.position}${detail}`, token.position)
}

function expected(what: string, token: Token): never {
  return fail(`expected ${what}`, token, `, found ${found(token)}`)
}

const isField = (name: string): name is SelectorField => (SELECTOR_FIELDS as readonly string[]).includes(name)

class SelectorParser {
  private next = 0

  constructor(private readonly tokens: readonly Token[]) {}

  requirements(): Requirement[] {
    const requirements: Requirement[] = []
    if (this.peek().kind === 'end') return requirements
    for (;;) {
      if (requirements.length === MAX_REQUIREMENTS) fail(`more than ${MAX_REQUIREMENTS} requirements`, this.peek())
      requirements.push(this.requirement())
      const after = this.take()
      if (after.kind === 'end') return requirements
      if (after.kind !== ',') expected("',' or end of selector", after)
    }
  }

  private requirement(): Requirement {
    const first = this.peek()
    if (first.kind === '!') {
      this.take()
      const subject = this.subject()
      const after = this.peek()
      if (after.kind !== ',' && after.kind !== 'end') fail(`expected ',' or end of selector`, after, `, found ${found(after)} ('!' takes no operator or value)`)
      return { subject, op: 'absent', values: [], position: first.position }
    }
    const subject = this.subject()
    const operator = this.peek()
    switch (operator.kind) {
      case ',':
      case 'end':
        return { subject, op: 'exists', values: [], position: first.position }
      case '=':
      case '==':
      case '!=':
        this.take()
        return { subject, op: operator.kind === '!=' ? 'neq' : 'eq', values: [this.singleValue(subject)], position: first.position }
      case 'word':
        if (operator.text === 'in' || operator.text === 'notin') {
          this.take()
          return { subject, op: operator.text, values: this.valueSet(subject), position: first.position }
        }
    }
    return expected("'=', '==', '!=', 'in', 'notin', ',' or end of selector", operator)
  }

  private subject(): Subject {
    const token = this.take()
    if (token.kind !== 'word') return expected('a label key or field', token)
    if (token.text.startsWith('@')) {
      const name = token.text.slice(1)
      if (!isField(name)) return fail(`unknown field ${found(token)}`, token, ': @version, @firmware or @online')
      return { field: name }
    }
    if (!isLabelKey(token.text)) fail(`invalid label key ${found(token)}`, token, `: ${LABEL_KEY_RULE}`)
    return { label: token.text }
  }

  /** After `=`, `==` or `!=`: a value, or none (the empty value) before `,` or the end. */
  private singleValue(subject: Subject): string {
    const token = this.peek()
    if (token.kind === ',' || token.kind === 'end') return this.checkedValue(subject, { kind: 'word', text: '', position: token.position })
    if (token.kind !== 'word') return expected('a value', token)
    this.take()
    return this.checkedValue(subject, token)
  }

  private valueSet(subject: Subject): string[] {
    const open = this.take()
    if (open.kind !== '(') expected("'('", open)
    if (this.peek().kind === ')') fail('empty set', this.peek(), `: '${subjectText(subject)} in/notin' needs at least one value`)
    const values = new Set<string>()
    let count = 0
    for (;;) {
      const token = this.take()
      if (token.kind !== 'word') expected('a value', token)
      if (++count > MAX_SET_VALUES) fail(`more than ${MAX_SET_VALUES} values in a set`, token)
      values.add(this.checkedValue(subject, token))
      const after = this.take()
      if (after.kind === ')') return [...values].sort()
      if (after.kind !== ',') expected("',' or ')'", after)
    }
  }

  private checkedValue(subject: Subject, token: Token): string {
    const value = token.text
    if ('field' in subject && subject.field === 'online') {
      if (value !== 'true' && value !== 'false') fail(`invalid value ${found(token)} of @online`, token, ': true or false')
    } else if (!isLabelValue(value)) {
      fail(`invalid value ${found(token)}`, token, `: ${LABEL_VALUE_RULE}`)
    }
    return value
  }

  private peek(): Token {
    return this.tokens[this.next]!
  }

  private take(): Token {
    const token = this.tokens[this.next]!
    if (token.kind !== 'end') this.next++
    return token
  }
}
