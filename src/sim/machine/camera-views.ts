import { Raster, type Rgb } from '../png/raster.js'
import { AXIS_LIMITS } from './axes.js'
import { BOARD } from './board.js'
import type { PickAndPlaceMachine } from './machine.js'

const COLORS = {
  bed: [58, 62, 66],
  rail: [90, 96, 102],
  board: [18, 110, 56],
  boardEdge: [200, 190, 120],
  pad: [205, 170, 90],
  part: [30, 30, 30],
  head: [230, 40, 40],
  feeder: [120, 120, 130],
  nozzleBg: [20, 20, 24],
  nozzle: [160, 160, 170],
  light: [250, 250, 210],
} as const satisfies Record<string, Rgb>

export interface CameraFrame {
  content_type: 'image/png'
  encoding: 'base64'
  data: string
  width: number
  height: number
}

const toFrame = (raster: Raster): CameraFrame => ({
  content_type: 'image/png',
  encoding: 'base64',
  data: raster.toPng().toString('base64'),
  width: raster.width,
  height: raster.height,
})

/** Items of the current or last task: placed ones as parts, the rest as bare pads. */
function drawItems(raster: Raster, machine: PickAndPlaceMachine, toPx: (x: number, y: number) => [number, number], scale: number): void {
  const { items, placed, layout } = machine.tasks.placedItems()
  if (!layout) return
  const size = Math.max(2, Math.round(2.5 * scale))
  items.forEach((item, i) => {
    const p = layout.machinePoint(item)
    const [px, py] = toPx(p.x, p.y)
    raster.fillRect(px - size / 2, py - size / 2, size, size, i < placed ? COLORS.part : COLORS.pad)
  })
}

/** Upper camera: the bed from above, the board, the feeders, and the head as a red crosshair. */
export function renderUpperView(machine: PickAndPlaceMachine, width: number, height: number): CameraFrame {
  const raster = new Raster(width, height, COLORS.bed)
  const scale = Math.min(width / AXIS_LIMITS.x.max, height / AXIS_LIMITS.y.max)
  const toPx = (x: number, y: number): [number, number] => [x * scale, y * scale]
  raster.fillRect(0, height - 3, width, 3, COLORS.rail)
  for (let slot = 0; slot < 12; slot++) raster.fillRect((10 + slot * 30) * scale, 10 * scale, 20 * scale, 40 * scale, COLORS.feeder)
  const [bx, by] = toPx(BOARD.x, BOARD.y)
  raster.fillRect(bx, by, BOARD.width * scale, BOARD.height * scale, COLORS.board)
  raster.strokeRect(bx, by, BOARD.width * scale, BOARD.height * scale, COLORS.boardEdge)
  drawItems(raster, machine, toPx, scale)
  const head = machine.axes.position()
  const [hx, hy] = toPx(head.x, head.y)
  raster.line(hx - 6, hy, hx + 6, hy, COLORS.head)
  raster.line(hx, hy - 6, hx, hy + 6, COLORS.head)
  raster.circle(hx, hy, 4, COLORS.head)
  if (machine.hardware.light.state) raster.circle(hx, hy, 7, COLORS.light)
  return toFrame(raster)
}

/** Lower camera: looking up at the nozzle, with the held part turned by the r axis. */
export function renderLowerView(machine: PickAndPlaceMachine, width: number, height: number): CameraFrame {
  const raster = new Raster(width, height, COLORS.nozzleBg)
  const cx = width / 2
  const cy = height / 2
  const held = machine.hardware.holding
  if (held) {
    const angle = (machine.axes.position().r * Math.PI) / 180
    const hw = width / 8
    const hh = width / 16
    const corner = (sx: number, sy: number): [number, number] => [cx + sx * hw * Math.cos(angle) - sy * hh * Math.sin(angle), cy + sx * hw * Math.sin(angle) + sy * hh * Math.cos(angle)]
    const corners = [corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)]
    corners.forEach((a, i) => {
      const b = corners[(i + 1) % 4]!
      raster.line(a[0], a[1], b[0], b[1], COLORS.pad)
    })
  }
  raster.circle(cx, cy, Math.max(3, width / 20), COLORS.nozzle, true)
  return toFrame(raster)
}

/** The board alone, scaled to fit: what the task has placed so far. */
export function renderBoardImage(machine: PickAndPlaceMachine, width: number, height: number): CameraFrame {
  const raster = new Raster(width, height, COLORS.bed)
  const scale = Math.min(width / BOARD.width, height / BOARD.height)
  const ox = (width - BOARD.width * scale) / 2
  const oy = (height - BOARD.height * scale) / 2
  raster.fillRect(ox, oy, BOARD.width * scale, BOARD.height * scale, COLORS.board)
  raster.strokeRect(ox, oy, BOARD.width * scale, BOARD.height * scale, COLORS.boardEdge)
  drawItems(raster, machine, (x, y) => [ox + (x - BOARD.x) * scale, oy + (y - BOARD.y) * scale], scale)
  return toFrame(raster)
}
