import { Type, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { badRequest } from './validate-body.js'

/** Every machine setting: its schema (what a valid value is) and its factory default. */
export const SETTING_SCHEMAS = {
  speed_mm_s: Type.Number({ minimum: 1, maximum: 500, default: 200, description: 'Default travel speed' }),
  acceleration_mm_s2: Type.Number({ minimum: 100, maximum: 20_000, default: 3000 }),
  z_safe_height_mm: Type.Number({ minimum: 0, maximum: 50, default: 10 }),
  vacuum_threshold_kpa: Type.Number({ minimum: -100, maximum: 0, default: -40, description: 'Pick detected below this pressure' }),
  nozzle: Type.Union(['CN030', 'CN040', 'CN065', 'CN100'].map((n) => Type.Literal(n)), { default: 'CN040' }),
  light_brightness: Type.Integer({ minimum: 0, maximum: 255, default: 180 }),
  vision_enabled: Type.Boolean({ default: true }),
  place_ms_per_item: Type.Integer({ minimum: 50, maximum: 60_000, default: 400, description: 'Simulated time to place one item' }),
  language: Type.Union([Type.Literal('en'), Type.Literal('zh')], { default: 'en' }),
} as const satisfies Record<string, TSchema>

export type SettingKey = keyof typeof SETTING_SCHEMAS

const isSettingKey = (key: string): key is SettingKey => Object.hasOwn(SETTING_SCHEMAS, key)

export class SettingsStore {
  private values: Record<SettingKey, unknown>

  constructor(private readonly overrides: Partial<Record<SettingKey, unknown>> = {}) {
    this.values = this.defaults()
  }

  all(): Record<SettingKey, unknown> {
    return { ...this.values }
  }

  get<T>(key: SettingKey): T {
    return this.values[key] as T
  }

  /** Sets one key; 400 `unknown_setting` or `invalid_value` when refused. */
  set(key: string, value: unknown): void {
    if (!isSettingKey(key)) throw badRequest('unknown_setting', `unknown setting "${key}"; known: ${Object.keys(SETTING_SCHEMAS).join(', ')}`)
    const schema = SETTING_SCHEMAS[key]
    if (!Value.Check(schema, value)) {
      throw badRequest('invalid_value', `${key}: ${Value.Errors(schema, value).First()?.message ?? 'invalid value'}`)
    }
    this.values[key] = value
  }

  reset(): void {
    this.values = this.defaults()
  }

  private defaults(): Record<SettingKey, unknown> {
    const entries = Object.entries(SETTING_SCHEMAS).map(([key, schema]) => [key, (schema as TSchema).default])
    return { ...(Object.fromEntries(entries) as Record<SettingKey, unknown>), ...this.overrides }
  }
}
