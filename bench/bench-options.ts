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
