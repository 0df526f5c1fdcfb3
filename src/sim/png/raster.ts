import { encodePng } from './png-encoder.js'

export type Rgb = readonly [number, number, number]

/** A tiny RGB canvas with the few shapes the simulated cameras draw. Coordinates are pixels, clipped. */
export class Raster {
  readonly pixels: Uint8Array

  constructor(
    readonly width: number,
    readonly height: number,
    background: Rgb,
  ) {
    this.pixels = new Uint8Array(width * height * 3)
    this.fillRect(0, 0, width, height, background)
  }

  setPixel(x: number, y: number, color: Rgb): void {
    const px = Math.round(x)
    const py = Math.round(y)
    if (px < 0 || py < 0 || px >= this.width || py >= this.height) return
    this.pixels.set(color, (py * this.width + px) * 3)
  }

  fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
    const x0 = Math.max(0, Math.round(x))
    const y0 = Math.max(0, Math.round(y))
    const x1 = Math.min(this.width, Math.round(x + w))
    const y1 = Math.min(this.height, Math.round(y + h))
    for (let py = y0; py < y1; py++) for (let px = x0; px < x1; px++) this.pixels.set(color, (py * this.width + px) * 3)
  }

  strokeRect(x: number, y: number, w: number, h: number, color: Rgb): void {
    this.line(x, y, x + w - 1, y, color)
    this.line(x, y + h - 1, x + w - 1, y + h - 1, color)
    this.line(x, y, x, y + h - 1, color)
    this.line(x + w - 1, y, x + w - 1, y + h - 1, color)
  }

  line(x0: number, y0: number, x1: number, y1: number, color: Rgb): void {
    const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1)
    for (let i = 0; i <= steps; i++) this.setPixel(x0 + ((x1 - x0) * i) / steps, y0 + ((y1 - y0) * i) / steps, color)
  }

  circle(cx: number, cy: number, r: number, color: Rgb, filled = false): void {
    for (let py = Math.floor(cy - r); py <= Math.ceil(cy + r); py++) {
      for (let px = Math.floor(cx - r); px <= Math.ceil(cx + r); px++) {
        const d = Math.hypot(px - cx, py - cy)
        if (filled ? d <= r : Math.abs(d - r) < 0.5) this.setPixel(px, py, color)
      }
    }
  }

  toPng(): Buffer {
    return encodePng(this.width, this.height, this.pixels)
  }
}
