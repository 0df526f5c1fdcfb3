import { parseDelimitedTable, type NumberedLine } from './csv-table.js'
import type { PlacementComponent } from './placement-schema.js'

/**
 * JLCPCB / EasyEDA component placement list: `Designator, Mid X, Mid Y, Layer, Rotation` in any
 * order (EasyEDA adds Footprint, Ref/Pad X/Y and Comment, and writes UTF-16 with tabs), values
 * possibly carrying `mm`, `mil` or `in`. Bare numbers are mm, as JLCPCB's template asks.
 */
export function parseJlcpcbCpl(lines: NumberedLine[]): PlacementComponent[] {
  return parseDelimitedTable(lines, { defaultUnit: 'mm' })
}

export const isJlcpcbCplHeader = (keys: string[]) => ['designator', 'midx', 'midy'].every((k) => keys.includes(k))
