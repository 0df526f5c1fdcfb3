import { execFile } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { REQUIRED_NODE } from '../../src/cli/required-node.js'
import { assertBuilt, CLI } from '../helpers/server-process.js'
import { npmCli, requireNode20 } from '../helpers/node20.js'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '../..')
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
const NODE20 = requireNode20('the Node 20 refusals')

async function exitOf(promise: Promise<{ stdout: string; stderr: string }>): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await promise
    return { code: 0, out: stdout + stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: e.stdout + e.stderr }
  }
}

describe('the runtime fleetgate needs (contract §17)', () => {
  it('asks package.json engines for what the command line checks', () => {
    expect(pkg.engines.node).toBe(REQUIRED_NODE)
  })

  it('is running the tests on Node 22.12 or later', () => {
    const [major, minor] = process.versions.node.split('.').map(Number)
    expect(major! > 22 || (major === 22 && minor! >= 12)).toBe(true)
  })

  it.runIf(NODE20)('npm install on Node 20 refuses clearly, naming the Node it needs, before installing anything', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fg-node20-install-'))
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(path.join(ROOT, file), path.join(dir, file))
    const result = await exitOf(run(NODE20!, [npmCli(), 'ci', '--dry-run', '--no-audit', '--no-fund'], { cwd: dir }))
    expect(result.code).not.toBe(0)
    expect(result.out).toMatch(/EBADENGINE/)
    expect(result.out).toContain(`Not compatible with your version of node/npm: fleetgate@`)
    expect(result.out).toContain(`"node":"${REQUIRED_NODE}"`)
  })

  it.runIf(NODE20)('the server started on Node 20 says which Node it needs and exits 1 (no crash in a native module)', async () => {
    assertBuilt()
    const result = await exitOf(run(NODE20!, [CLI, 'serve'], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'sqlite::memory:' } }))
    expect(result.code).toBe(1)
    expect(result.out.trim()).toMatch(/^fleetgate: Node\.js >=22\.12 is needed \(Node 24 LTS is the reference\); this is v20\.\d+\.\d+\. See the README, "Node 24"\.$/)
  })
})
