import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parsePlacementFile } from '../../src/sim/placement/parse-placement-file.js'
import { PlacementError } from '../../src/sim/placement/placement-schema.js'
import { testMachine } from './machine-helpers.js'

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url))
const parse = (name: string) => parsePlacementFile(name, fixture(name))
const brief = (c: { designator: string; x: number; y: number; rotation: number; side: string }) => [c.designator, c.x, c.y, c.rotation, c.side]

describe('placement files', () => {
  it('reads a KiCad 8 ASCII .pos table in mm, normalising negative rotations', () => {
    const parsed = parse('kicad8-all-pos.pos')
    expect(parsed).toMatchObject({ format: 'kicad-pos', units: 'mm', count: 8 })
    expect(parsed.components[0]).toEqual({ designator: 'C1', value: '100nF', package: 'C_0603_1608Metric', x: 133.35, y: -81.28, rotation: 180, side: 'top' })
    expect(parsed.components.map(brief)).toEqual([
      ['C1', 133.35, -81.28, 180, 'top'],
      ['C2', 140.97, -81.28, 90, 'top'],
      ['C10', 141.224, -96.52, 180, 'bottom'],
      ['D1', 127, -95.25, 270, 'top'],
      ['J1', 150, -70.5, 0, 'top'],
      ['R1', 127, -88.9, 0, 'top'],
      ['R2', 130.81, -88.9, 314.5, 'top'],
      ['U1', 140, -95, 45, 'top'],
    ])
  })

  it('converts a KiCad 5 .pos table written in inches to mm', () => {
    const parsed = parse('kicad5-top-inches.pos')
    expect(parsed).toMatchObject({ format: 'kicad-pos', count: 3 })
    expect(parsed.components.map(brief)).toEqual([
      ['C1', 133.35, -81.28, 180, 'top'],
      ['R1', 127, -88.9, 270, 'top'],
      ['U1', 139.7, -88.9, 270, 'top'],
    ])
    expect(parsed.components[2]).toMatchObject({ value: 'NE555', package: 'SOIC-8_3.9x4.9mm_P1.27mm' })
  })

  it('reads a KiCad CSV position file', () => {
    const parsed = parse('kicad7-all-pos.csv')
    expect(parsed).toMatchObject({ format: 'kicad-csv', count: 5 })
    expect(parsed.components.map(brief)).toEqual([
      ['C1', 133.35, -81.28, 180, 'top'],
      ['C10', 141.224, -96.52, 180, 'bottom'],
      ['D1', 127, -95.25, 270, 'top'],
      ['R1', 127, -88.9, 0, 'top'],
      ['U1', 140, -95, 45, 'top'],
    ])
  })

  it('reads a JLCPCB CPL with mm suffixes and columns in another order', () => {
    const parsed = parse('jlcpcb-cpl-mm.csv')
    expect(parsed).toMatchObject({ format: 'jlcpcb-cpl', count: 5 })
    expect(parsed.components.map(brief)).toEqual([
      ['C1', 133.35, -81.28, 180, 'top'],
      ['C10', 141.224, -96.52, 180, 'bottom'],
      ['D1', 127, -95.25, 270, 'top'],
      ['R1', 127, -88.9, 0, 'top'],
      ['U1', 140, -95, 45, 'top'],
    ])
  })

  it('reads an EasyEDA export (UTF-16, tab-separated) with mil suffixes and T/B layers', () => {
    const parsed = parse('easyeda-pickandplace.csv')
    expect(parsed).toMatchObject({ format: 'jlcpcb-cpl', count: 3 })
    expect(parsed.components).toEqual([
      { designator: 'C1', value: '100nF', package: 'C0603', x: 133.35, y: -81.28, rotation: 180, side: 'top' },
      { designator: 'R1', value: '10k', package: 'R0603', x: 127, y: -88.9, rotation: 270, side: 'bottom' },
      { designator: 'U2', value: 'AP2112K-3.3', package: 'SOT-23-5', x: 123.8377, y: -76.51115, rotation: 270, side: 'top' },
    ])
  })

  it('reads an Altium Pick and Place CSV export in mm, with commas inside quoted descriptions', () => {
    const parsed = parse('altium-pick-place.csv')
    expect(parsed).toMatchObject({ format: 'altium-pnp', count: 4 })
    expect(parsed.components.map(brief)).toEqual([
      ['C1', 25.4, 12.7, 90, 'top'],
      ['Q1', 30.48, 15.24, 270, 'top'],
      ['R5', 10.16, 5.08, 180, 'bottom'],
      ['U1', 40.005, 20.0025, 359.5, 'top'],
    ])
    expect(parsed.components[3]).toMatchObject({ value: 'DRV8871', package: 'SOIC-8 PowerPAD' })
  })

  it('reads an Altium fixed-width text export in mil, keeping spaces inside footprints', () => {
    const parsed = parse('altium-pick-place-mil.txt')
    expect(parsed).toMatchObject({ format: 'altium-pnp', count: 3 })
    expect(parsed.components).toEqual([
      { designator: 'C1', value: '100nF', package: 'CAP 0603', x: 25.4, y: 12.7, rotation: 90, side: 'top' },
      { designator: 'C2', value: '1uF', package: 'CAP 0805', x: 31.75, y: 19.05, rotation: 180, side: 'bottom' },
      { designator: 'U1', value: 'BME280', package: 'LGA-8 2.5x2.5', x: 38.1127, y: -6.35, rotation: 270, side: 'top' },
    ])
  })

  it('reads a generic CSV whose header names inches, honouring a per-value mm suffix and F.Cu/B.Cu sides', () => {
    const parsed = parse('generic-placement-inches.csv')
    expect(parsed).toMatchObject({ format: 'generic-csv', count: 3 })
    expect(parsed.components.map(brief)).toEqual([
      ['J2', 12.7, 31.75, 180, 'top'],
      ['R7', 30.48, 19.05, 90, 'bottom'],
      ['Y1', 20.32, 10.16, 12.5, 'top'],
    ])
  })

  it('refuses Gerber artwork, unrelated text and binary data with a reason', () => {
    expect(() => parse('gerber-top-copper.gbr')).toThrow(/Gerber artwork, not a placement file/)
    expect(() => parse('notes.txt')).toThrow(/unrecognised placement file/)
    expect(() => parsePlacementFile('photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2, 3, 0, 0, 0]))).toThrow(/binary/)
    expect(() => parsePlacementFile('empty.csv', Buffer.alloc(0))).toThrow(PlacementError)
  })

  it('names the line of a bad value', () => {
    const bad = Buffer.from('Designator,Mid X,Mid Y,Layer,Rotation\nC1,1mm,2mm,Top,0\nC2,abc,2mm,Top,0\n')
    expect(() => parsePlacementFile('cpl.csv', bad)).toThrow(/cpl\.csv: line 3: x "abc" is not a length/)
    const badSide = Buffer.from('Designator,Mid X,Mid Y,Layer,Rotation\nC1,1mm,2mm,Middle,0\n')
    expect(() => parsePlacementFile('cpl.csv', badSide)).toThrow(/unknown board side "Middle"/)
  })

  it('answers POST /orders/parse with the parsed file, and 400 with the reason for an unreadable one', async () => {
    const { call } = testMachine()
    const encode = (name: string) => ({ filename: name, encoding: 'base64', data: fixture(name).toString('base64') })
    const ok = await call('POST', '/orders/parse', encode('kicad7-all-pos.csv'))
    expect(ok.status).toBe(200)
    expect(ok.data.parsed).toMatchObject({ format: 'kicad-csv', units: 'mm', count: 5 })
    const garbage = await call('POST', '/orders/parse', encode('notes.txt'))
    expect(garbage).toMatchObject({ status: 400, data: { error: 'unreadable_file', message: expect.stringMatching(/^notes\.txt: unrecognised/) } })
    expect((await call('POST', '/orders/parse', { filename: 'a.csv', encoding: 'base64', data: '!!not base64!!' })).status).toBe(400)
    expect((await call('POST', '/orders/parse', { filename: 'a.csv', encoding: 'hex', data: '00' })).status).toBe(400)
  })
})
