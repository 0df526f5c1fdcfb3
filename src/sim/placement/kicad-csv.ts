import { parseDelimitedTable, type NumberedLine } from './csv-table.js'
import type { PlacementComponent } from './placement-schema.js'

/**
 * KiCad's CSV position file: `Ref,Val,Package,PosX,PosY,Rot,Side`. The file does not name its
 * unit; KiCad's default (mm) is assumed, and a value carrying a unit suffix wins.
 */
export function parseKicadCsv(lines: NumberedLine[]): PlacementComponent[] {
  return parseDelimitedTable(lines, { defaultUnit: 'mm' })
}

export const isKicadCsvHeader = (keys: string[]) => ['ref', 'val', 'package', 'posx', 'posy', 'rot'].every((k) => keys.includes(k))
