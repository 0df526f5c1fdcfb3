import { render } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { serialLines } from './serial-lines'
import { ValueList } from './value-list'

const shown = (value: unknown) => render(<ValueList value={value} empty="None" />).container.textContent ?? ''

describe('a machine-defined answer', () => {
  it('shows strings as text and any other value as formatted JSON, never undefined or [object Object]', () => {
    const text = shown({ sent: 'M114', response: 'ok', axes: { x: 1.23456, y: null }, errors: [], flags: [true, 2] })
    expect(text).toContain('M114')
    expect(text).toContain('ok')
    expect(text).toContain('"x": 1.23456')
    expect(text).toContain('"y": null')
    expect(text).toContain('[]')
    expect(text).not.toMatch(/undefined|\[object Object\]/)
  })

  it('shows a list of strings as lines, and an answer that is not an object as it came', () => {
    const { container } = render(<ValueList value={{ response: ['[VER:1.1h]', 'ok'] }} />)
    expect([...container.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['[VER:1.1h]', 'ok'])
    expect(shown('ready')).toBe('ready')
    expect(shown([1, 2])).toBe('[ 1, 2 ]')
    expect(shown({ calibration: { state: 'never', progress: 0, started_at: null, completed_at: null } })).toContain('{\n  "state": "never",\n')
    expect(shown(null)).toBe('null')
  })

  it('reads serial logs of strings, of the reference machine’s entries, and of shapes it does not know', () => {
    expect(serialLines({ lines: ['> M114', '< ok'] })).toEqual(['> M114', '< ok'])
    expect(serialLines({ lines: [{ ts: 1, direction: 'tx', line: '$I' }, { ts: 2, direction: 'rx', line: 'ok' }] })).toEqual(['→ $I', '← ok'])
    expect(serialLines({ lines: [{ at: 1, text: 'G28' }] })).toEqual(['{ "at": 1, "text": "G28" }'])
    expect(serialLines({ log: 'G28\nok' })).toEqual(['{ "log": "G28\\nok" }'])
    expect(serialLines('G28 ok')).toEqual(['G28 ok'])
  })
})
