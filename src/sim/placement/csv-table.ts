import { PlacementError, type PlacementComponent } from './placement-schema.js'
import { parseRotation, parseSide } from './placement-values.js'
import { parseLengthMm, unitFromName, type LengthUnit } from './units.js'

export type ColumnRole = 'designator' | 'value' | 'package' | 'x' | 'y' | 'rotation' | 'side'

/** Header spellings per role, in order of preference (a centre beats a reference point or a pad). */
const ALIASES: Record<ColumnRole, string[]> = {
  designator: ['designator', 'ref', 'refdes', 'reference', 'references', 'part', 'partname'],
  value: ['val', 'value', 'comment', 'partvalue'],
  package: ['package', 'footprint', 'pattern', 'case', 'pkg'],
  x: ['midx', 'centerx', 'centrex', 'posx', 'x', 'locationx', 'locx', 'refx'],
  y: ['midy', 'centery', 'centrey', 'posy', 'y', 'locationy', 'locy', 'refy'],
  rotation: ['rotation', 'rot', 'angle', 'orientation', 'rotate'],
  side: ['layer', 'side', 'tb', 'placement'],
}

export interface Column {
  index: number
  /** Unit named in the header, e.g. `Center-X(mm)`. */
  unit?: LengthUnit
}
export type ColumnMap = Partial<Record<ColumnRole, Column>>

export interface HeaderCell {
  key: string
  unit?: LengthUnit
}

/** `"Center-X(mm)"` → `{key: 'centerx', unit: 'mm'}`; `"Mid X"` → `{key: 'midx'}`. */
export function normaliseHeader(cell: string): HeaderCell {
  const unitMatch = /[([]\s*([a-z"]+)\s*[)\]]/i.exec(cell)
  const unit = unitMatch ? unitFromName(unitMatch[1]!) : undefined
  const key = cell
    .replace(/[([][^)\]]*[)\]]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
  return unit ? { key, unit } : { key }
}

export function mapColumns(header: string[]): ColumnMap {
  const cells = header.map(normaliseHeader)
  const map: ColumnMap = {}
  for (const role of Object.keys(ALIASES) as ColumnRole[]) {
    for (const alias of ALIASES[role]) {
      const index = cells.findIndex((c) => c.key === alias)
      if (index >= 0) {
        map[role] = { index, ...(cells[index]!.unit && { unit: cells[index]!.unit }) }
        break
      }
    }
  }
  return map
}

export const hasPlacementColumns = (map: ColumnMap) => map.designator !== undefined && map.x !== undefined && map.y !== undefined

const DELIMITERS = [',', '\t', ';'] as const

/** The delimiter that splits the header line into the most cells (outside quotes); undefined when none does. */
export function detectDelimiter(headerLine: string): string | undefined {
  let best: string | undefined
  let bestCount = 0
  for (const delimiter of DELIMITERS) {
    const count = splitDelimited(headerLine, delimiter).length - 1
    if (count > bestCount) {
      best = delimiter
      bestCount = count
    }
  }
  return best
}

/** One CSV line: quoted cells may hold the delimiter, `""` is a quote. Cells are trimmed. */
export function splitDelimited(line: string, delimiter: string): string[] {
  const cells: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (quoted) {
      if (ch !== '"') cell += ch
      else if (line[i + 1] === '"') {
        cell += '"'
        i++
      } else quoted = false
    } else if (ch === '"' && cell.trim() === '') {
      quoted = true
      cell = ''
    } else if (ch === delimiter) {
      cells.push(cell.trim())
      cell = ''
    } else cell += ch
  }
  cells.push(cell.trim())
  return cells
}

export interface TableRow {
  cells: string[]
  line: number
}

export interface TableOptions {
  /** Unit of bare numbers in columns whose header names none. */
  defaultUnit: LengthUnit
  /** `12,5` is a decimal number (semicolon- or tab-separated files from some locales). */
  decimalComma?: boolean
}

/** Rows of a table whose columns are known → components in mm. Throws on the first bad row, naming its line. */
export function rowsToComponents(rows: TableRow[], columns: ColumnMap, options: TableOptions): PlacementComponent[] {
  if (!hasPlacementColumns(columns)) throw new PlacementError('no Designator, X and Y columns found in the header')
  const cell = (row: TableRow, role: ColumnRole) => {
    const column = columns[role]
    return column ? row.cells[column.index] : undefined
  }
  const length = (row: TableRow, role: 'x' | 'y') => {
    const text = cell(row, role) ?? ''
    const mm = parseLengthMm(text, columns[role]!.unit ?? options.defaultUnit, options.decimalComma)
    if (mm === undefined) throw new PlacementError(`line ${row.line}: ${role} "${text}" is not a length`)
    return mm
  }
  return rows.map((row) => {
    const designator = cell(row, 'designator') ?? ''
    if (designator === '') throw new PlacementError(`line ${row.line}: empty designator`)
    return {
      designator,
      value: cell(row, 'value') ?? '',
      package: cell(row, 'package') ?? '',
      x: length(row, 'x'),
      y: length(row, 'y'),
      rotation: parseRotation(cell(row, 'rotation'), `line ${row.line}`, options.decimalComma),
      side: parseSide(cell(row, 'side'), `line ${row.line}`),
    }
  })
}

export interface NumberedLine {
  text: string
  line: number
}

export interface DelimitedHeader {
  index: number
  delimiter: string
  columns: ColumnMap
  keys: string[]
}

/** The first line (of the first 30) that splits into Designator, X and Y columns; tools may write title lines above it. */
export function findDelimitedHeader(lines: NumberedLine[]): DelimitedHeader | undefined {
  for (let index = 0; index < Math.min(lines.length, 30); index++) {
    const delimiter = detectDelimiter(lines[index]!.text)
    if (!delimiter) continue
    const cells = splitDelimited(lines[index]!.text, delimiter)
    const columns = mapColumns(cells)
    if (hasPlacementColumns(columns)) return { index, delimiter, columns, keys: cells.map((c) => normaliseHeader(c).key) }
  }
  return undefined
}

/** A delimited table (CSV, TSV, semicolons) below its header row. */
export function parseDelimitedTable(lines: NumberedLine[], options: TableOptions): PlacementComponent[] {
  const header = findDelimitedHeader(lines)
  if (!header) throw new PlacementError('no header row with Designator, X and Y columns')
  const rows = lines
    .slice(header.index + 1)
    .map((l) => ({ cells: splitDelimited(l.text, header.delimiter), line: l.line }))
    .filter((row) => row.cells.some((c) => c !== ''))
  return rowsToComponents(rows, header.columns, { ...options, decimalComma: options.decimalComma ?? header.delimiter !== ',' })
}
