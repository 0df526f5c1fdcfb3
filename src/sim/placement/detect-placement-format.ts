import { findDelimitedHeader, type NumberedLine } from './csv-table.js'
import { isJlcpcbCplHeader } from './jlcpcb-cpl.js'
import { isKicadCsvHeader } from './kicad-csv.js'
import { PlacementError, type PlacementFormat } from './placement-schema.js'

const head = (lines: NumberedLine[], n = 30) => lines.slice(0, n).map((l) => l.text)

/** Which tool wrote the file, from its content (file names are not trusted: KiCad writes `.pos` and `.csv`, tools rename). */
export function detectPlacementFormat(lines: NumberedLine[]): PlacementFormat {
  const first = head(lines)
  if (first.some((l) => /^(%FS|%MO|G04\b|%TF)/.test(l.trim()))) {
    throw new PlacementError('this is Gerber artwork, not a placement file; export a pick-and-place (position) file instead')
  }
  if (first.some((l) => /pick and place locations/i.test(l)) || first.some((l) => /^\s*units used\s*:/i.test(l))) return 'altium-pnp'
  if (first.some((l) => /^#+\s*(module|footprint) positions/i.test(l) || /^##\s*unit\s*=/i.test(l) || /^#\s*ref\s+val\s+package/i.test(l))) {
    return 'kicad-pos'
  }
  const header = findDelimitedHeader(lines)
  if (header) {
    if (isKicadCsvHeader(header.keys)) return 'kicad-csv'
    if (isJlcpcbCplHeader(header.keys)) return 'jlcpcb-cpl'
    return 'generic-csv'
  }
  throw new PlacementError(
    'unrecognised placement file: expected a KiCad position file, a CSV with Designator, Mid X and Mid Y columns, or an Altium Pick and Place export',
  )
}
