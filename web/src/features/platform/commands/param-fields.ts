import type { ParamSchema } from '../platform-types'

/** How one command param is entered, derived from its JSON Schema in meta.actions. */
export type ParamField =
  | { kind: 'integer'; name: string; min?: number; max?: number; hint?: string }
  | { kind: 'number'; name: string; min?: number; max?: number; hint?: string }
  | { kind: 'text'; name: string; minLength?: number; maxLength?: number; hint?: string }
  | { kind: 'choice'; name: string; options: string[]; hint?: string }
  | { kind: 'choices'; name: string; options: string[]; minItems?: number; maxItems?: number; hint?: string }
  | { kind: 'boolean'; name: string; hint?: string }
  | { kind: 'json'; name: string; hint?: string }

const finite = (values: (number | undefined)[]) => values.filter((v): v is number => typeof v === 'number')

/** An `anyOf` of numeric ranges (hid_scroll.wheel: −127…−1 or 1…127) as one range; the server refuses the gap. */
function mergeRanges(branches: ParamSchema[]): ParamSchema | undefined {
  if (!branches.every((b) => b.type === 'integer' || b.type === 'number')) return undefined
  const mins = finite(branches.map((b) => b.minimum))
  const maxs = finite(branches.map((b) => b.maximum))
  return {
    type: branches.every((b) => b.type === 'integer') ? 'integer' : 'number',
    ...(mins.length === branches.length ? { minimum: Math.min(...mins) } : {}),
    ...(maxs.length === branches.length ? { maximum: Math.max(...maxs) } : {}),
  }
}

export function fieldOf(name: string, schema: ParamSchema): ParamField {
  const hint = schema.description
  const s = schema.anyOf ? { ...(mergeRanges(schema.anyOf) ?? {}), description: hint } : schema
  if (Array.isArray(s.enum)) return { kind: 'choice', name, options: s.enum.map(String), hint }
  switch (s.type) {
    case 'integer':
      return { kind: 'integer', name, min: s.minimum, max: s.maximum, hint }
    case 'number':
      return { kind: 'number', name, min: s.minimum, max: s.maximum, hint }
    case 'string':
      return { kind: 'text', name, minLength: s.minLength, maxLength: s.maxLength, hint }
    case 'boolean':
      return { kind: 'boolean', name, hint }
    case 'array':
      if (Array.isArray(s.items?.enum)) return { kind: 'choices', name, options: s.items.enum.map(String), minItems: s.minItems, maxItems: s.maxItems, hint }
      return { kind: 'json', name, hint }
    default:
      return { kind: 'json', name, hint }
  }
}

/** One field per param of the action, in the order meta lists them. */
/** The API types each param's schema as any JSON; a non-object reads as an unknown shape (a JSON field). */
export const fieldsOf = (params: Readonly<Record<string, unknown>>): ParamField[] =>
  Object.entries(params).map(([name, schema]) => fieldOf(name, (typeof schema === 'object' && schema !== null ? schema : {}) as ParamSchema))

/**
 * The params object for the chosen action, typed as the schema says (integers as numbers,
 * arrays as arrays). A value that does not parse is sent as typed so the server's 400 names it.
 */
export function readParams(fields: readonly ParamField[], formElement: HTMLFormElement): Record<string, unknown> {
  const form = new FormData(formElement)
  const params: Record<string, unknown> = {}
  for (const field of fields) {
    const raw = form.get(field.name)
    const text = typeof raw === 'string' ? raw : ''
    switch (field.kind) {
      case 'integer':
      case 'number': {
        const n = text.trim() === '' ? Number.NaN : Number(text)
        params[field.name] = Number.isFinite(n) ? n : text
        break
      }
      case 'choices': {
        const select = formElement.elements.namedItem(field.name)
        params[field.name] = select instanceof HTMLSelectElement ? Array.from(select.selectedOptions, (o) => o.value) : form.getAll(field.name).map(String)
        break
      }
      case 'boolean':
        params[field.name] = raw !== null
        break
      case 'json':
        try {
          params[field.name] = JSON.parse(text) as unknown
        } catch {
          params[field.name] = text
        }
        break
      default:
        params[field.name] = text
    }
  }
  return params
}
