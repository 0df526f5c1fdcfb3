import { Type, type TObject } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { badRequest } from '../../errors.js'
import { EXPRESSIONS } from './expressions.js'
import { HID_KEY_NAMES } from './hid-keys.js'

const strict = { additionalProperties: false }
const Empty = Type.Object({}, strict)
const KeyName = Type.Union(HID_KEY_NAMES.map((k) => Type.Literal(k)), { description: 'A name of meta.hid_keys' })

/** Seed §4.15 with contract §8's ranges: every listed param required, no unknown params. */
export const ACTION_PARAMS = {
  bleep: Type.Object({ duration: Type.Integer({ minimum: 1, maximum: 10000, description: 'ms' }) }, strict),
  sync_time: Empty,
  ota_check: Empty,
  ping: Empty,
  reboot: Empty,
  expression: Type.Object({ expression: Type.Union(EXPRESSIONS.map((e) => Type.Literal(e)), { description: 'One of meta.expressions' }) }, strict),
  hid_text: Type.Object({ text: Type.String({ minLength: 1, maxLength: 1024 }) }, strict),
  hid_combo: Type.Object({ keys: Type.Array(KeyName, { minItems: 1, maxItems: 6 }) }, strict),
  hid_key: Type.Object({ key: KeyName }, strict),
  hid_click: Type.Object(
    {
      button: Type.Union([Type.Literal('left'), Type.Literal('right'), Type.Literal('middle')]),
      hold: Type.Integer({ minimum: 0, maximum: 10000, description: 'ms' }),
    },
    strict,
  ),
  hid_scroll: Type.Object(
    { wheel: Type.Union([Type.Integer({ minimum: -127, maximum: -1 }), Type.Integer({ minimum: 1, maximum: 127 })], { description: '−127…127, not 0' }) },
    strict,
  ),
  hid_vendor: Type.Object({ text: Type.String({ minLength: 1, maxLength: 64 }) }, strict),
  hid_release: Empty,
} satisfies Record<string, TObject>

export type CommandAction = keyof typeof ACTION_PARAMS
export const ACTIONS = Object.keys(ACTION_PARAMS) as CommandAction[]
export const isHidAction = (action: string) => action.startsWith('hid_')

const checks = Object.fromEntries(ACTIONS.map((a) => [a, TypeCompiler.Compile(ACTION_PARAMS[a])])) as Record<CommandAction, TypeCheck<TObject>>

const isAction = (action: string): action is CommandAction => Object.hasOwn(ACTION_PARAMS, action)

/** The action and its params when valid, else 400 naming the offending param. */
export function validateCommand(action: string, params: Record<string, unknown> | undefined): { action: CommandAction; params: Record<string, unknown> } {
  if (!isAction(action)) throw badRequest(`Unknown action ${JSON.stringify(action)}; one of ${ACTIONS.join(', ')}`)
  const value = params ?? {}
  const check = checks[action]
  if (!check.Check(value)) {
    const error = check.Errors(value).First()
    const where = error?.path ? `params${error.path.replaceAll('/', '.')}` : 'params'
    const hint = error?.schema.description ? ` (${error.schema.description})` : ''
    throw badRequest(`Invalid ${action} ${where}: ${error?.message ?? 'invalid'}${hint}`, { action })
  }
  return { action, params: value }
}

/** meta.actions: each action with the JSON Schema of each of its params (literal unions as `enum`). */
export function describeActions(): { action: CommandAction; params: Record<string, unknown> }[] {
  return ACTIONS.map((action) => ({ action, params: compact(JSON.parse(JSON.stringify(ACTION_PARAMS[action].properties))) as Record<string, unknown> }))
}

function compact(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compact)
  if (typeof schema !== 'object' || schema === null) return schema
  const s = schema as Record<string, unknown>
  const anyOf = s.anyOf as Record<string, unknown>[] | undefined
  if (anyOf?.every((branch) => 'const' in branch)) {
    const { anyOf: _, ...rest } = s
    return { ...rest, type: typeof anyOf[0]!.const, enum: anyOf.map((branch) => branch.const) }
  }
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, compact(v)]))
}
