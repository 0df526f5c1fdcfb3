import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { crc32 } from 'node:zlib'
import { encodePng, PNG_SIGNATURE } from '../../src/sim/png/png-encoder.js'
import { Raster } from '../../src/sim/png/raster.js'

/** Splits a PNG into its chunks, checking each CRC on the way. */
function readChunks(png: Buffer) {
  const chunks: { type: string; data: Buffer; crcOk: boolean }[] = []
  let offset = 8
  while (offset < png.length) {
    const length = png.readUInt32BE(offset)
    const type = png.subarray(offset + 4, offset + 8)
    const data = png.subarray(offset + 8, offset + 8 + length)
    const crc = png.readUInt32BE(offset + 8 + length)
    chunks.push({ type: type.toString('ascii'), data, crcOk: crc === crc32(data, crc32(type)) })
    offset += 12 + length
  }
  return chunks
}

describe('PNG encoder', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926)
    expect(crc32(Buffer.from('IEND'))).toBe(0xae426082)
  })

  it('writes a valid signature, IHDR, IDAT and IEND with correct CRCs', () => {
    const width = 7
    const height = 5
    const pixels = new Uint8Array(width * height * 3).map((_, i) => i % 251)
    const png = encodePng(width, height, pixels)
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE)
    const chunks = readChunks(png)
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND'])
    expect(chunks.every((c) => c.crcOk)).toBe(true)
    const ihdr = chunks[0]!.data
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[10], ihdr[11], ihdr[12]]).toEqual([width, height, 8, 2, 0, 0, 0])
    const raw = inflateSync(chunks[1]!.data)
    expect(raw.length).toBe(height * (width * 3 + 1))
    for (let y = 0; y < height; y++) {
      const row = raw.subarray(y * (width * 3 + 1), (y + 1) * (width * 3 + 1))
      expect(row[0]).toBe(0)
      expect(row.subarray(1)).toEqual(Buffer.from(pixels.subarray(y * width * 3, (y + 1) * width * 3)))
    }
  })

  it('refuses pixel buffers that do not match the size', () => {
    expect(() => encodePng(2, 2, new Uint8Array(11))).toThrow(/expected 12/)
    expect(() => encodePng(0, 2, new Uint8Array(0))).toThrow(/size/)
  })

  it('draws clipped shapes on a raster', () => {
    const raster = new Raster(10, 10, [0, 0, 0])
    raster.fillRect(-5, -5, 8, 8, [255, 0, 0])
    raster.line(0, 9, 9, 9, [0, 255, 0])
    const at = (x: number, y: number) => [...raster.pixels.subarray((y * 10 + x) * 3, (y * 10 + x) * 3 + 3)]
    expect(at(2, 2)).toEqual([255, 0, 0])
    expect(at(3, 3)).toEqual([0, 0, 0])
    expect(at(5, 9)).toEqual([0, 255, 0])
    expect(readChunks(raster.toPng()).every((c) => c.crcOk)).toBe(true)
  })
})
