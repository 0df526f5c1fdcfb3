import { describe, expect, it } from 'vitest'
import { selectorMatches, type SelectableMachine } from '../../../src/gateway/labels/selector/evaluate-selector.js'
import { parseSelector } from '../../../src/gateway/labels/selector/parse-selector.js'
import { reportedFirmware } from '../../../src/gateway/labels/selector/reported-firmware.js'
import { onlineInStore, storedMachine } from '../../../src/gateway/labels/selector/stored-machine.js'

const EDGE: SelectableMachine = { labels: { zone: 'eu', tier: 'gold', empty: '' }, version: '1.2.0', firmware: '2.3.1', online: true }
const BARE: SelectableMachine = { labels: {}, version: '1.0', firmware: undefined, online: false }

/** selector → [matches EDGE, matches BARE] */
const TABLE: [string, boolean, boolean][] = [
  ['', true, true],
  ['zone', true, false],
  ['!zone', false, true],
  ['zone=eu', true, false],
  ['zone==eu', true, false],
  ['zone=EU', false, false],
  ['zone!=eu', false, true],
  ['zone!=us', true, true],
  ['zone in (us,eu)', true, false],
  ['zone in (us)', false, false],
  ['zone notin (us,eu)', false, true],
  ['zone notin (us)', true, true],
  ['empty', true, false],
  ['empty=', true, false],
  ['empty!=', false, true],
  ['zone=', false, false],
  ['zone=eu,tier=gold', true, false],
  ['zone=eu,tier=silver', false, false],
  ['zone=eu,!tier', false, false],
  ['!zone,!tier', false, true],
  ['zone=eu,zone=us', false, false],
  // Only the machine's own labels: `constructor` is a valid key, and every object has that property.
  ['constructor', false, false],
  ['constructor!=x', true, true],
  ['@version=1.2.0', true, false],
  ['@version!=1.2.0', false, true],
  ['@version in (1.0,1.2.0)', true, true],
  ['@version notin (1.0)', true, false],
  ['@version', true, true],
  ['!@version', false, false],
  ['@firmware=2.3.1', true, false],
  ['@firmware!=2.3.1', false, true],
  ['@firmware in (2.3.1)', true, false],
  ['@firmware notin (2.3.1)', false, true],
  ['@firmware', true, false],
  ['!@firmware', false, true],
  ['@firmware=', false, false],
  ['@online=true', true, false],
  ['@online=false', false, true],
  ['@online!=true', false, true],
  ['@online in (true,false)', true, true],
  ['@online notin (true,false)', false, false],
  ['@online notin (false)', true, false],
  ['@online', true, true],
  ['!@online', false, false],
  ['@online=true,zone=eu,@firmware in (2.3.1,2.4.0)', true, false],
]

describe('selectorMatches', () => {
  it.each(TABLE)('%j: edge %s, bare %s', (text, edge, bare) => {
    const selector = parseSelector(text)
    expect(selectorMatches(selector, EDGE)).toBe(edge)
    expect(selectorMatches(selector, BARE)).toBe(bare)
  })
})

describe('a stored machine', () => {
  it.each([
    ['{"firmware":"2.3.1"}', '2.3.1'],
    ['{"firmware":""}', ''],
    ['{"firmware":"a\\nb"}', 'a\nb'],
    ['{}', undefined],
    ['{"firmware":null}', undefined],
    ['{"firmware":2}', undefined],
    ['{"firmware":{"version":"2"}}', undefined],
    ['{"Firmware":"2"}', undefined],
    ['["firmware"]', undefined],
    ['"firmware"', undefined],
    ['not json', undefined],
    // PostgreSQL cannot read these anywhere in the text: no firmware, on every engine.
    ['{"firmware":"2","note":"\\u0000"}', undefined],
    ['{"firmware":"2","note":"\\ud800"}', undefined],
    ['{"firmware":"2","note":"\\u0001"}', '2'],
  ])('reports the firmware of %s as %j', (status, firmware) => {
    expect(reportedFirmware(status)).toBe(firmware)
  })

  it('is online when linked with a heartbeat or a registration stored at aliveSince or later', () => {
    expect(onlineInStore({ link_instance: 'i1', last_heartbeat: 100, connect_time: null }, 100)).toBe(true)
    expect(onlineInStore({ link_instance: 'i1', last_heartbeat: 99.5, connect_time: 50 }, 100)).toBe(false)
    expect(onlineInStore({ link_instance: 'i1', last_heartbeat: null, connect_time: null }, 100)).toBe(false)
    expect(onlineInStore({ link_instance: 'i1', last_heartbeat: null, connect_time: 120 }, 100)).toBe(true)
    expect(onlineInStore({ link_instance: 'i1', last_heartbeat: 20, connect_time: 100 }, 100)).toBe(true)
    expect(onlineInStore({ link_instance: null, last_heartbeat: 200, connect_time: 200 }, 100)).toBe(false)
    const row = { version: '1.0', last_status: '{"firmware":"2"}', link_instance: 'i1', last_heartbeat: 150, connect_time: 10 }
    expect(storedMachine(row, { zone: 'eu' }, 100)).toEqual({ labels: { zone: 'eu' }, version: '1.0', firmware: '2', online: true })
  })
})
