import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve('src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return /\.(ts|tsx|js|mjs|cjs)$/.test(entry.name) ? [full] : []
  })
}

/**
 * The product changes no Node or V8 flag at run time (Node: "may result in unpredictable
 * behavior, including crashes") and needs none at start: flags are a deployment's choice
 * (README, "Node flags (optional)").
 */
describe('fleetgate sets no V8 flags at run time', () => {
  it('no file in src/ calls setFlagsFromString or imports it from node:v8', () => {
    const offenders = sourceFiles(SRC)
      // Named import, v8.setFlagsFromString, a dynamic import's member: all spell it out.
      .filter((file) => readFileSync(file, 'utf8').includes('setFlagsFromString'))
      .map((file) => path.relative(SRC, file))
    expect(offenders).toEqual([])
  })

  it('the fleetgate command runs through a plain `#!/usr/bin/env node` (no `env -S`, which busybox lacks, no flags)', () => {
    const main = readFileSync(path.join(SRC, 'cli/main.ts'), 'utf8')
    expect(main.slice(0, main.indexOf('\n') + 1)).toBe('#!/usr/bin/env node\n')
  })
})
