import { describe, expect, it } from 'vitest'
import { parseLogLine, parseLogText } from '../../src/platform/logs/log-text-parser.js'

describe('text/plain log lines', () => {
  it.each([
    ['[ERROR] disk full', { level: 'error', message: 'disk full' }],
    ['[warn] low battery', { level: 'warn', message: 'low battery' }],
    ['[WARNING] low battery', { level: 'warn', message: 'low battery' }],
    ['[Info] booted', { level: 'info', message: 'booted' }],
    ['[DEBUG] x=1', { level: 'debug', message: 'x=1' }],
    ['[INFO]', { level: 'info', message: '' }],
    ['E (1234) wifi: connection lost', { level: 'error', tag: 'wifi', message: 'connection lost' }],
    ['W (55) ota: slow: 3 retries', { level: 'warn', tag: 'ota', message: 'slow: 3 retries' }],
    ['I (0) main: ready', { level: 'info', tag: 'main', message: 'ready' }],
    ['D (10) spi: tx', { level: 'debug', tag: 'spi', message: 'tx' }],
    ['V (10) spi: bits', { level: 'debug', tag: 'spi', message: 'bits' }],
    ['I (12:34:56.789) main: wall clock', { level: 'info', tag: 'main', message: 'wall clock' }],
    ['\u001b[0;31mE (99) app: red\u001b[0m', { level: 'error', tag: 'app', message: 'red' }],
  ])('reads %j', (line, expected) => {
    expect(parseLogLine(line)).toEqual(expected)
  })

  it.each([['plain text'], ['[FATAL] nope'], ['X (1) tag: msg'], ['E 1234 wifi: lost'], ['E (abc) wifi: lost'], ['ERROR: thing']])(
    'does not read %j',
    (line) => {
      expect(parseLogLine(line)).toBeNull()
    },
  )

  it('skips blank lines and accepts CRLF', () => {
    expect(parseLogText('[INFO] a\r\n\r\n  \nE (1) t: b\n')).toEqual([
      { level: 'info', message: 'a' },
      { level: 'error', tag: 't', message: 'b' },
    ])
  })

  it('rejects the batch naming the first bad line, 1-based', () => {
    expect(() => parseLogText('[INFO] a\n\nnot a log line\n[INFO] c')).toThrow(/line 3/)
  })

  it('rejects a message over 4096 characters, a tag over 64 and U+0000', () => {
    expect(() => parseLogText(`[INFO] ${'m'.repeat(4097)}`)).toThrow(/line 1/)
    expect(parseLogText(`[INFO] ${'m'.repeat(4096)}`)).toHaveLength(1)
    expect(() => parseLogText(`I (1) ${'t'.repeat(65)}: m`)).toThrow(/line 1/)
    expect(() => parseLogText('[INFO] a\u0000b')).toThrow(/line 1/)
  })
})
