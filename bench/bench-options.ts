/** `--name value` from a benchmark's arguments: a positive number (an integer with `integer`), or `fallback`. */
export function option(args: string[], name: string, fallback: number, { integer = false } = {}): number {
  const i = args.indexOf(`--${name}`)
  const value = i >= 0 ? Number(args[i + 1]) : fallback
  if (!(integer ? Number.isInteger(value) : Number.isFinite(value)) || value <= 0) {
    throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}`)
  }
  return value
}

/** `--name value` from a benchmark's arguments: one of `choices`, or `fallback`. */
export function choice<const C extends string>(args: string[], name: string, choices: readonly C[], fallback: C): C {
  const i = args.indexOf(`--${name}`)
  const value = i >= 0 ? args[i + 1] : fallback
  if (!choices.includes(value as C)) throw new Error(`--${name} must be one of ${choices.join(', ')}`)
  return value as C
}

export type Engine = 'sqlite' | 'postgres'

/** `--engines sqlite,postgres` from a benchmark's arguments: the engines to run on, both by default. */
export function engines(args: string[]): Engine[] {
  const i = args.indexOf('--engines')
  const named = i >= 0 ? (args[i + 1] ?? '').split(',') : ['sqlite', 'postgres']
  if (named.length === 0 || named.some((e) => e !== 'sqlite' && e !== 'postgres')) throw new Error('--engines must be sqlite, postgres or both, comma-separated')
  return named as Engine[]
}
