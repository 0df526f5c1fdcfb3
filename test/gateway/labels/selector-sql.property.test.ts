import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectorMatches } from '../../../src/gateway/labels/selector/evaluate-selector.js'
import { parseSelector } from '../../../src/gateway/labels/selector/parse-selector.js'
import { selectorCondition, type SelectorSqlOptions } from '../../../src/gateway/labels/selector/selector-sql.js'
import { formatSelector, type Operator, type Requirement, type Subject } from '../../../src/gateway/labels/selector/selector-syntax.js'
import { storedMachine, type StoredMachineRow } from '../../../src/gateway/labels/selector/stored-machine.js'
import type { Db, Storage } from '../../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../../helpers/dialects.js'

/**
 * The SQL of a selector must select exactly the machines the in-memory evaluator matches: random
 * fleets in a real migrated database, random selectors over the same small alphabets (so that
 * requirements hit, miss and collide often). `SELECTOR_SEED=<n>` replays a failure.
 */
const SEED = Number(process.env.SELECTOR_SEED ?? 20_240_533)
const FLEETS = 2
const MACHINES = 200
const SELECTORS_PER_FLEET = 250
const ALIVE_SINCE = 1_700_000_000.5

const KEYS = ['a', 'b', 'zone', 'team/x', 'constructor']
const LABEL_VALUES = ['', '1', '2', 'x', 'X']
const VERSIONS = ['1.0', '1.1', '2.0', '']
const FIRMWARE_VALUES = ['1.0', '2.0', '2.1', '', 'X']
const STATUSES = [
  '{}',
  '{"firmware":"1.0"}',
  '{"firmware":"2.0"}',
  '{"firmware":""}',
  '{"uptime":5,"firmware":"2.1"}',
  '{"firmware":"X"}',
  '{"firmware":"x"}',
  '{"firmware":null}',
  '{"firmware":3}',
  '{"firmware":true}',
  '{"firmware":{"v":"1.0"}}',
  '{"firmware":["1.0"]}',
  '{"Firmware":"1.0"}',
  '[]',
  '"1.0"',
  // Escapes PostgreSQL cannot read: no firmware, on every engine (an escaped backslash before `u0000` included).
  '{"firmware":"1.0","note":"\\u0000"}',
  '{"firmware":"2.0","note":"\\ud83d"}',
  '{"firmware":"1.0","note":"\\\\u0000"}',
  '{"firmware":"1.0","note":"\\u0007\\n\\u00e9"}',
]
const HEARTBEATS = [null, ALIVE_SINCE - 100, ALIVE_SINCE - 0.001, ALIVE_SINCE, ALIVE_SINCE + 0.25]
const OPERATORS: Operator[] = ['eq', 'neq', 'in', 'notin', 'exists', 'absent']

/** mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

type Random = () => number
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!
const between = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1))
const shuffled = <T>(random: Random, items: readonly T[]): T[] => {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j]!, copy[i]!]
  }
  return copy
}

interface FleetMachine {
  row: StoredMachineRow & { device_id: string }
  labels: Record<string, string>
}

function randomFleet(random: Random): FleetMachine[] {
  return Array.from({ length: MACHINES }, (_, i) => ({
    row: {
      device_id: `m${String(i).padStart(3, '0')}`,
      version: pick(random, VERSIONS),
      last_status: pick(random, STATUSES),
      link_instance: random() < 0.3 ? null : 'i1',
      last_heartbeat: pick(random, HEARTBEATS),
      connect_time: pick(random, HEARTBEATS),
    },
    labels: Object.fromEntries(shuffled(random, KEYS).slice(0, between(random, 0, 5)).map((key) => [key, pick(random, LABEL_VALUES)])),
  }))
}

function randomRequirement(random: Random): Requirement {
  const subject: Subject = random() < 0.6 ? { label: pick(random, KEYS) } : { field: pick(random, ['version', 'firmware', 'online'] as const) }
  const alphabet = 'label' in subject ? LABEL_VALUES : subject.field === 'version' ? VERSIONS : subject.field === 'firmware' ? FIRMWARE_VALUES : ['true', 'false']
  const op = pick(random, OPERATORS)
  const single = op === 'eq' || op === 'neq'
  const set = op === 'in' || op === 'notin'
  // A set holds no empty value (the parser refuses `in (a,)`).
  const setAlphabet = alphabet.filter((value) => value !== '')
  const values = single ? [pick(random, alphabet)] : set ? Array.from({ length: between(random, 1, 3) }, () => pick(random, setAlphabet)) : []
  return { subject, op, values, position: 0 }
}

async function storeFleet(db: Db, machines: readonly FleetMachine[]): Promise<void> {
  await db.deleteFrom('device_labels').execute()
  await db.deleteFrom('devices').execute()
  await db
    .insertInto('devices')
    .values(machines.map(({ row }) => ({ ...row, hostname: row.device_id, ip: '', key_hash: null, link_id: null, created_at: 0 })))
    .execute()
  const labels = machines.flatMap(({ row, labels }) => Object.entries(labels).map(([key, value]) => ({ device_id: row.device_id, key, value })))
  if (labels.length > 0) await db.insertInto('device_labels').values(labels).execute()
}

async function selectedIds(db: Db, condition: ReturnType<typeof selectorCondition>, negated = false): Promise<string[]> {
  const rows = await db
    .selectFrom('devices')
    .select('device_id')
    .where((eb) => (negated ? eb.not(condition(eb)) : condition(eb)))
    .execute()
  return rows.map((row) => row.device_id).sort()
}

function describeMachines(machines: readonly FleetMachine[], ids: readonly string[]): string {
  return ids
    .slice(0, 5)
    .map((id) => JSON.stringify(machines.find((m) => m.row.device_id === id)))
    .join('\n  ')
}

describe.each(DIALECTS)('selector SQL on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it(`selects what the evaluator matches: ${FLEETS} random fleets × ${SELECTORS_PER_FLEET} random selectors`, async () => {
    const random = seededRandom(SEED)
    const options: SelectorSqlOptions = { dialect, aliveSince: ALIVE_SINCE }
    let partial = 0
    for (let fleet = 0; fleet < FLEETS; fleet++) {
      const machines = randomFleet(random)
      await storeFleet(storage.db, machines)
      const allIds = machines.map((m) => m.row.device_id).sort()
      for (let n = 0; n < SELECTORS_PER_FLEET; n++) {
        const text = formatSelector({ requirements: Array.from({ length: between(random, 1, 4) }, () => randomRequirement(random)) })
        const selector = parseSelector(text)
        const expected = machines
          .filter((m) => selectorMatches(selector, storedMachine(m.row, m.labels, ALIVE_SINCE)))
          .map((m) => m.row.device_id)
          .sort()
        const context = `seed ${SEED} (replay with SELECTOR_SEED=${SEED}), fleet ${fleet}, selector ${JSON.stringify(text)}`
        const condition = selectorCondition(selector, options)
        const actual = await selectedIds(storage.db, condition).catch((err: Error) => {
          throw new Error(`${context}: ${err.message}`, { cause: err })
        })
        const onlyInSql = actual.filter((id) => !expected.includes(id))
        const onlyInMemory = expected.filter((id) => !actual.includes(id))
        expect(
          { onlyInSql, onlyInMemory },
          `${context}\n  only in SQL: ${describeMachines(machines, onlyInSql)}\n  only in memory: ${describeMachines(machines, onlyInMemory)}`,
        ).toEqual({ onlyInSql: [], onlyInMemory: [] })
        // Never NULL: the negation selects exactly the rest.
        expect(await selectedIds(storage.db, condition, true), `${context}, negated`).toEqual(allIds.filter((id) => !expected.includes(id)))
        if (expected.length > 0 && expected.length < MACHINES) partial++
      }
    }
    // The alphabets are small enough that most selectors split the fleet rather than take all or none.
    expect(partial, `seed ${SEED}`).toBeGreaterThan(FLEETS * SELECTORS_PER_FLEET * 0.4)
  })

  it('selects every machine with the empty selector', async () => {
    const machines = randomFleet(seededRandom(SEED + 1))
    await storeFleet(storage.db, machines)
    expect(await selectedIds(storage.db, selectorCondition(parseSelector('  '), { dialect, aliveSince: ALIVE_SINCE }))).toHaveLength(MACHINES)
  })

  it('takes aliveSince as an SQL expression: the database clock', async () => {
    const now = await storage.clock.read(storage.db)
    const machine = (id: string, heartbeat: number) => ({ row: { device_id: id, version: '1', last_status: '{}', link_instance: 'i1', last_heartbeat: heartbeat, connect_time: null }, labels: {} })
    await storeFleet(storage.db, [machine('recent', now - 10), machine('silent', now - 600)])
    const online = selectorCondition(parseSelector('@online=true'), { dialect, aliveSince: storage.clock.shifted(-60) })
    expect(await selectedIds(storage.db, online)).toEqual(['recent'])
  })
})
