export const LENGTH_UNITS = ['mm', 'mil', 'in'] as const
export type LengthUnit = (typeof LENGTH_UNITS)[number]

const MICRONS_PER_UNIT: Record<LengthUnit, number> = { mm: 1000, mil: 25.4, in: 25_400 }

const UNIT_NAMES: Record<string, LengthUnit> = {
  mm: 'mm',
  millimeter: 'mm',
  millimeters: 'mm',
  millimetre: 'mm',
  millimetres: 'mm',
  metric: 'mm',
  mil: 'mil',
  mils: 'mil',
  thou: 'mil',
  in: 'in',
  inch: 'in',
  inches: 'in',
  '"': 'in',
  imperial: 'in',
}

export function unitFromName(name: string): LengthUnit | undefined {
  return UNIT_NAMES[name.trim().toLowerCase()]
}

const NUMBER_WITH_UNIT = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([a-z"]*)$/i

/** Micrometre precision hides binary noise (1250 mil → 31.75, not 31.750000000000004). */
export const roundMm = (value: number) => Math.round(value * 1e6) / 1e6 + 0

/** `"12.5mm"`, `"1250mil"`, `"0.5in"`, `"-3.2"` (in `defaultUnit`) → mm; undefined when not a length. */
export function parseLengthMm(text: string, defaultUnit: LengthUnit, decimalComma = false): number | undefined {
  const cleaned = decimalComma ? text.trim().replace(',', '.') : text.trim()
  const match = NUMBER_WITH_UNIT.exec(cleaned)
  if (!match) return undefined
  const unit = match[2] ? unitFromName(match[2]) : defaultUnit
  if (!unit) return undefined
  const value = Number(match[1])
  if (!Number.isFinite(value)) return undefined
  return roundMm((value * MICRONS_PER_UNIT[unit]) / 1000)
}
