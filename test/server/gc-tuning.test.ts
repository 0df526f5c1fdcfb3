import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const GC_TUNING = path.resolve('dist/src/gc-tuning.js')

/**
 * Objects from three allocation sites that all live through several scavenges, until the young
 * generation is at its largest: the pattern V8 pretenures. Prints V8's pretenuring decisions.
 */
const PROBE = `
if (process.argv[2]) (await import(process.argv[2])).disablePretenuring()
const keep = new Array(200_000)
function make(i) { return { a: i, b: [i, i + 1], c: { d: i } } }
for (let round = 0; round < 40; round++) for (let i = 0; i < keep.length; i++) keep[i] = make(i)
`

function tenureDecisions(withTuning: boolean): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'fg-gc-'))
  const probe = path.join(dir, 'probe.mjs')
  writeFileSync(probe, PROBE)
  // A young generation fixed at 1 MB: the kept objects surely outlive their scavenges, however
  // busy the machine (with V8's own sizing a loaded run once saw no decision at all).
  const young = ['--min-semi-space-size=1', '--max-semi-space-size=1']
  const run = spawnSync(process.execPath, ['--trace-pretenuring-statistics', ...young, probe, ...(withTuning ? [pathToFileURL(GC_TUNING).href] : [])], {
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
  return run.stdout.split('\n').filter((line) => line.includes('=> tenure')).length
}

describe('disablePretenuring (called first by serve)', () => {
  it('stops V8 from tenuring allocation sites when set at run time, on this Node', () => {
    if (!existsSync(GC_TUNING)) throw new Error(`${GC_TUNING} is missing: run the build (npm test does) before these tests`)
    expect(tenureDecisions(false)).toBeGreaterThan(0)
    expect(tenureDecisions(true)).toBe(0)
  })
})
