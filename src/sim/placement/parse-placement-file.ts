import { parseAltiumPnp } from './altium-pnp.js'
import type { NumberedLine } from './csv-table.js'
import { detectPlacementFormat } from './detect-placement-format.js'
import { parseGenericCsv } from './generic-csv.js'
import { parseJlcpcbCpl } from './jlcpcb-cpl.js'
import { parseKicadCsv } from './kicad-csv.js'
import { parseKicadPos } from './kicad-pos.js'
import { PlacementError, type ParsedPlacement, type PlacementComponent, type PlacementFormat } from './placement-schema.js'
import { decodePlacementText, numberedLines } from './text-decoding.js'

const PARSERS: Record<PlacementFormat, (lines: NumberedLine[]) => PlacementComponent[]> = {
  'kicad-pos': parseKicadPos,
  'kicad-csv': parseKicadCsv,
  'jlcpcb-cpl': parseJlcpcbCpl,
  'altium-pnp': parseAltiumPnp,
  'generic-csv': parseGenericCsv,
}

/** A placement file's bytes → components in mm. Throws `PlacementError` with a reason prefixed by the file name. */
export function parsePlacementFile(filename: string, bytes: Buffer): ParsedPlacement {
  try {
    const lines = numberedLines(decodePlacementText(bytes))
    const format = detectPlacementFormat(lines)
    const components = PARSERS[format](lines)
    if (components.length === 0) throw new PlacementError('no components found')
    return { format, units: 'mm', count: components.length, components }
  } catch (err) {
    if (err instanceof PlacementError) throw new PlacementError(`${filename}: ${err.message}`)
    throw err
  }
}
