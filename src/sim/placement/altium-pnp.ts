import { detectDelimiter, mapColumns, parseDelimitedTable, rowsToComponents, type NumberedLine } from './csv-table.js'
import { PlacementError, type PlacementComponent } from './placement-schema.js'
import { unitFromName, type LengthUnit } from './units.js'

/** Two-word column titles of Altium's text export; every other title is one word. */
const HEADER_TITLE = /Mid X|Mid Y|Ref X|Ref Y|Pad X|Pad Y|\S+/g

/**
 * Altium Designer "Pick and Place" output. A header block names the unit (`Units used: mm` or
 * `mil`); the table follows either as quoted CSV or as the fixed-width text layout, where each
 * value starts under its column title. Values may also carry their own unit (`1250mil`).
 */
export function parseAltiumPnp(lines: NumberedLine[]): PlacementComponent[] {
  const unitLine = lines.find((l) => /^\s*units used\s*:/i.test(l.text))
  // Altium's own default unit is the mil; a file that does not say so is taken in mil.
  let defaultUnit: LengthUnit = 'mil'
  if (unitLine) {
    const name = unitLine.text.split(':')[1]!.trim()
    const unit = unitFromName(name)
    if (!unit) throw new PlacementError(`line ${unitLine.line}: unknown unit "${name}"`)
    defaultUnit = unit
  }
  const headerIndex = lines.findIndex((l) => /(^|[\s",])Designator([\s",]|$)/.test(l.text))
  if (headerIndex < 0) throw new PlacementError('no Designator header row in the Altium file')
  const header = lines[headerIndex]!
  const delimiter = detectDelimiter(header.text)
  if (delimiter === ',' || delimiter === '\t' || delimiter === ';') return parseDelimitedTable(lines.slice(headerIndex), { defaultUnit })
  return parseFixedWidth(header, lines.slice(headerIndex + 1), defaultUnit)
}

function parseFixedWidth(header: NumberedLine, data: NumberedLine[], defaultUnit: LengthUnit): PlacementComponent[] {
  const titles = [...header.text.matchAll(HEADER_TITLE)].map((m) => ({ title: m[0], start: m.index }))
  const columns = mapColumns(titles.map((t) => t.title))
  const rows = data
    .filter((l) => !/^=+$/.test(l.text.trim()))
    .map((l) => ({
      line: l.line,
      cells: titles.map((t, i) => l.text.slice(t.start, i + 1 < titles.length ? titles[i + 1]!.start : undefined).trim()),
    }))
  return rowsToComponents(rows, columns, { defaultUnit })
}
