import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MACHINE_TRANSITIONS, ROLLOUT_TRANSITIONS } from '../../src/gateway/rollouts/rollout-states.js'

/** docs/coordination.md is the one place the rules instances coordinate by are written: its state tables are the code's. */
const doc = readFileSync(new URL('../../docs/coordination.md', import.meta.url), 'utf8')

/** The `| From | To |` table under `heading`, as the code writes its transition tables. */
function tableAfter(heading: string): Record<string, string[]> {
  const start = doc.indexOf(heading)
  expect(start, `docs/coordination.md has "${heading}"`).toBeGreaterThanOrEqual(0)
  const lines = doc.slice(start).split('\n')
  const first = lines.findIndex((line) => line.startsWith('| From | To |'))
  const rows: Record<string, string[]> = {}
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break
    const [from, to] = line.split('|').slice(1, 3).map((cell) => cell.trim())
    rows[from!] = to === '—' ? [] : to!.split(',').map((s) => s.trim())
  }
  return rows
}

describe('docs/coordination.md', () => {
  it('lists the rollout transitions the code allows, and only those', () => {
    expect(tableAfter('A rollout (`ROLLOUT_TRANSITIONS`')).toEqual(ROLLOUT_TRANSITIONS)
  })

  it('lists the machine transitions the code allows, and only those', () => {
    expect(tableAfter('A machine in a rollout (`MACHINE_TRANSITIONS`')).toEqual(MACHINE_TRANSITIONS)
  })

  it('names every shared row the instances decide on', () => {
    for (const row of ['devices.link_generation', 'instances.last_seen', 'rollouts.state', 'rollout_devices.state', 'rollout_devices.next_try_at', "firmware_releases.state = 'active'", 'platform_commands.status', 'login_counters.failures', 'fleetgate.retention', 'fleetgate:lost-instances']) {
      expect(doc).toContain(row)
    }
  })

  it('puts the times of the command queue and of the login windows on the database’s clock (rule 3)', () => {
    for (const row of ['`platform_commands.status`', '`login_counters.failures`']) {
      const line = doc.split('\n').find((l) => l.startsWith(`| ${row}`))
      expect(line, `docs/coordination.md has a row for ${row}`).toBeDefined()
      const clock = line!.split('|').at(-2)!.trim()
      expect(clock, row).toMatch(/^database\b/)
    }
    expect(doc).not.toContain('Not yet on the database')
  })
})
