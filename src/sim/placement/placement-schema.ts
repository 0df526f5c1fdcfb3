import { Type, type Static } from '@sinclair/typebox'

export const PLACEMENT_FORMATS = ['kicad-pos', 'kicad-csv', 'jlcpcb-cpl', 'altium-pnp', 'generic-csv'] as const
export const PlacementFormat = Type.Union(PLACEMENT_FORMATS.map((f) => Type.Literal(f)))
export type PlacementFormat = Static<typeof PlacementFormat>

export const BoardSide = Type.Union([Type.Literal('top'), Type.Literal('bottom')])
export type BoardSide = Static<typeof BoardSide>

export const PlacementComponent = Type.Object({
  designator: Type.String(),
  value: Type.String(),
  package: Type.String(),
  x: Type.Number({ description: 'mm, sign as in the file' }),
  y: Type.Number({ description: 'mm, sign as in the file' }),
  rotation: Type.Number({ minimum: 0, exclusiveMaximum: 360, description: 'Degrees, normalised to [0, 360)' }),
  side: BoardSide,
})
export type PlacementComponent = Static<typeof PlacementComponent>

/** The `parsed` answer of `POST /orders/parse` (contract §10). */
export const ParsedPlacement = Type.Object({
  format: PlacementFormat,
  units: Type.Literal('mm'),
  count: Type.Integer(),
  components: Type.Array(PlacementComponent),
})
export type ParsedPlacement = Static<typeof ParsedPlacement>

/** A file that cannot be read as a placement file; the message is the reason shown to the user. */
export class PlacementError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PlacementError'
  }
}
