import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { benchNodeFlags } from '../../bench/node-flags.js'
import { commandLineOf, nodeFlagsBefore } from '../helpers/node-command-line.js'

// The compiled targets: their server processes fork the compiled file, as `npm run bench` does.
const TARGETS = path.resolve('dist/bench/bench-targets.js')

describe('the benchmarks\' Node flags (bench/node-flags.ts)', () => {
  it('are none unless BENCH_NODE_FLAGS names them, space-separated', () => {
    expect(benchNodeFlags({})).toEqual([])
    expect(benchNodeFlags({ BENCH_NODE_FLAGS: '' })).toEqual([])
    expect(benchNodeFlags({ BENCH_NODE_FLAGS: ' --no-memory-reducer   --no-allocation-site-pretenuring ' })).toEqual(['--no-memory-reducer', '--no-allocation-site-pretenuring'])
  })

  it('are the flags of every contender of the proxy benchmark (bare, floor, fleetgate), and the only ones', { timeout: 60_000 }, async () => {
    if (!existsSync(TARGETS)) throw new Error(`${TARGETS} is missing: run the build (npm test does) before these tests`)
    process.env.BENCH_NODE_FLAGS = '--no-memory-reducer --max-semi-space-size=16'
    const { startTarget } = (await import(pathToFileURL(TARGETS).href)) as typeof import('../../bench/bench-targets.js')
    for (const name of ['bare', 'floor', 'forwarded'] as const) {
      const target = await startTarget(name)
      try {
        expect(nodeFlagsBefore(commandLineOf(target.pid), 'bench-targets.js'), name).toEqual(['--no-memory-reducer', '--max-semi-space-size=16'])
      } finally {
        await target.stop()
      }
    }
  })
})
