import type { NumberedLine } from './csv-table.js'
import { PlacementError, type PlacementComponent } from './placement-schema.js'
import { parseRotation, parseSide } from './placement-values.js'
import { parseLengthMm, unitFromName, type LengthUnit } from './units.js'

/**
 * KiCad's ASCII `.pos` table (Fabrication outputs → Footprint positions, "ASCII" format):
 *
 *     ## Unit = mm, Angle = deg.
 *     # Ref     Val       Package                PosX       PosY       Rot  Side
 *     C1        100nF     C_0603_1608Metric  133.3500   -81.2800  180.0000  top
 *
 * KiCad replaces spaces in fields with `_`, so columns split on whitespace.
 */
export function parseKicadPos(lines: NumberedLine[]): PlacementComponent[] {
  let unit: LengthUnit = 'mm'
  let fileSide: string | undefined
  let hasSideColumn = true
  const components: PlacementComponent[] = []
  for (const { text, line } of lines) {
    const trimmed = text.trim()
    if (trimmed.startsWith('#')) {
      const unitMatch = /unit\s*=\s*([a-z"]+)/i.exec(trimmed)
      if (unitMatch) {
        const named = unitFromName(unitMatch[1]!)
        if (!named) throw new PlacementError(`line ${line}: unknown unit "${unitMatch[1]}"`)
        unit = named
      }
      const sideMatch = /^##\s*side\s*:\s*(\w+)/i.exec(trimmed)
      if (sideMatch && !/^all$/i.test(sideMatch[1]!)) fileSide = sideMatch[1]
      if (/^#\s*ref\s/i.test(trimmed)) hasSideColumn = /\bside\s*$/i.test(trimmed)
      continue
    }
    const t = trimmed.split(/\s+/)
    const tail = hasSideColumn ? 5 : 4
    if (t.length < tail + 2) throw new PlacementError(`line ${line}: expected Ref Val Package PosX PosY Rot${hasSideColumn ? ' Side' : ''}`)
    const n = t.length
    const [x, y, rot] = hasSideColumn ? [t[n - 4]!, t[n - 3]!, t[n - 2]!] : [t[n - 3]!, t[n - 2]!, t[n - 1]!]
    const xMm = parseLengthMm(x, unit)
    const yMm = parseLengthMm(y, unit)
    if (xMm === undefined || yMm === undefined) throw new PlacementError(`line ${line}: position "${x} ${y}" is not a number pair`)
    components.push({
      designator: t[0]!,
      value: t.slice(1, n - tail).join(' '),
      package: t[n - tail]!,
      x: xMm,
      y: yMm,
      rotation: parseRotation(rot, `line ${line}`),
      side: parseSide(hasSideColumn ? t[n - 1] : fileSide, `line ${line}`),
    })
  }
  return components
}
