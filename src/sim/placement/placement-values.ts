import { PlacementError, type BoardSide } from './placement-schema.js'

const SIDE_SPELLINGS: Record<string, BoardSide> = {
  t: 'top',
  top: 'top',
  toplayer: 'top',
  front: 'top',
  f: 'top',
  fcu: 'top',
  component: 'top',
  components: 'top',
  b: 'bottom',
  bot: 'bottom',
  bottom: 'bottom',
  bottomlayer: 'bottom',
  back: 'bottom',
  bcu: 'bottom',
  solder: 'bottom',
}

/** Top or bottom from any spelling the tools use: T/B, Top/Bottom, F.Cu/B.Cu, TopLayer/BottomLayer, front/back. */
export function parseSide(text: string | undefined, where: string): BoardSide {
  if (text === undefined || text.trim() === '') return 'top'
  const side = SIDE_SPELLINGS[text.toLowerCase().replace(/[^a-z]/g, '')]
  if (!side) throw new PlacementError(`${where}: unknown board side "${text}"`)
  return side
}

/** Degrees normalised to [0, 360). */
export function normaliseRotation(degrees: number): number {
  const normalised = Math.round((((degrees % 360) + 360) % 360) * 1e6) / 1e6
  return normalised === 360 ? 0 : normalised + 0
}

export function parseRotation(text: string | undefined, where: string, decimalComma = false): number {
  if (text === undefined || text.trim() === '') return 0
  const cleaned = text.trim().replace(/\s*(°|deg|degrees?)$/i, '')
  const value = Number(decimalComma ? cleaned.replace(',', '.') : cleaned)
  if (cleaned === '' || !Number.isFinite(value)) throw new PlacementError(`${where}: rotation "${text}" is not a number`)
  return normaliseRotation(value)
}
