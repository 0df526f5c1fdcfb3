/** `--name value` from a benchmark's arguments: a positive number (an integer with `integer`), or `fallback`. */
export function option(args: string[], name: string, fallback: number, { integer = false } = {}): number {
  const i = args.indexOf(`--${name}`)
  const value = i >= 0 ? Number(args[i + 1]) : fallback
  if (!(integer ? Number.isInteger(value) : Number.isFinite(value)) || value <= 0) {
    throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}`)
  }
  return value
}
