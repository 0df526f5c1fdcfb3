import { parseDelimitedTable, type NumberedLine } from './csv-table.js'
import type { PlacementComponent } from './placement-schema.js'

/** Any delimited table with a designator, X and Y column (Rotation, Layer/Side, Value, Package optional); bare numbers are mm. */
export function parseGenericCsv(lines: NumberedLine[]): PlacementComponent[] {
  return parseDelimitedTable(lines, { defaultUnit: 'mm' })
}
