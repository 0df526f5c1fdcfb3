import { clampToLimits, type Position } from './axes.js'

/** Where the PCB sits on the machine bed, in machine mm. */
export const BOARD = { x: 100, y: 80, width: 200, height: 150 } as const
export const TRAVEL_HEIGHT_MM = 10
const MARGIN_MM = 5

export interface BoardPoint {
  x: number
  y: number
}

/**
 * Placement files use the CAD origin (KiCad's is off the board, with negative Y). The machine
 * fiducials the board instead: the items' bounding box starts `MARGIN_MM` inside the board corner.
 */
export class BoardLayout {
  private readonly minX: number
  private readonly minY: number

  constructor(items: readonly BoardPoint[]) {
    this.minX = items.length ? Math.min(...items.map((i) => i.x)) : 0
    this.minY = items.length ? Math.min(...items.map((i) => i.y)) : 0
  }

  /** Machine coordinates of an item, within the soft limits. */
  machinePoint(item: BoardPoint, angle = 0): Position {
    return clampToLimits({ x: BOARD.x + MARGIN_MM + (item.x - this.minX), y: BOARD.y + MARGIN_MM + (item.y - this.minY), z: TRAVEL_HEIGHT_MM, r: angle })
  }
}
