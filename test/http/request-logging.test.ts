import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { LazyRequestLogger, lazyRequestLogger, requestIdGenerator } from '../../src/http/request-logging.js'

function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  return { logger: pino({ level }, stream), lines }
}

describe('request ids', () => {
  it('are UUID-shaped, unique within a process and differ between processes (generators)', () => {
    const one = requestIdGenerator()
    const other = requestIdGenerator()
    const ids = Array.from({ length: 1000 }, one)
    expect(new Set(ids).size).toBe(1000)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(other().slice(0, 24)).not.toBe(ids[0]!.slice(0, 24))
  })
})

describe('the lazy per-request logger', () => {
  it('writes lines carrying the request id, at the parent level', () => {
    const { logger, lines } = capture('info')
    const log = new LazyRequestLogger(logger, { reqId: 'r-1' }, {})
    log.debug('hidden')
    log.info({ a: 1 }, 'shown')
    log.error('failed')
    expect(lines.map((l) => [l.msg, l.reqId, l.level])).toEqual([
      ['shown', 'r-1', 30],
      ['failed', 'r-1', 50],
    ])
    expect(log.isLevelEnabled('debug')).toBe(false)
    expect(log.isLevelEnabled('info')).toBe(true)
  })

  it('honours a route log level given to the child', () => {
    const { logger, lines } = capture('info')
    const log = lazyRequestLogger(logger, { reqId: 'r-2' }, { level: 'debug' })
    log.debug('shown at debug')
    expect(lines).toMatchObject([{ msg: 'shown at debug', reqId: 'r-2', level: 20 }])
    expect(log.level).toBe('debug')
  })

  it('makes children that keep the request id', () => {
    const { logger, lines } = capture('info')
    lazyRequestLogger(logger, { reqId: 'r-3' }, {}).child({ deviceId: 'pnp-1' }).warn('careful')
    expect(lines).toMatchObject([{ msg: 'careful', reqId: 'r-3', deviceId: 'pnp-1' }])
  })
})
