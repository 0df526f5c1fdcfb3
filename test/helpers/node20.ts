import { execFileSync } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import path from 'node:path'

/**
 * A Node 20 binary, for what must (or must refuse to) run on the machines' older Node: the one
 * `.ci/run` found on the machine before it brought Node 24 (`FLEETGATE_NODE20`), else
 * `/usr/bin/node` when it is a Node 20. Undefined when there is none; in CI that fails the caller.
 */
export function node20(): string | undefined {
  const candidates = [process.env.FLEETGATE_NODE20, '/usr/bin/node'].filter((c): c is string => !!c && existsSync(c))
  return candidates.find((candidate) => versionOf(candidate).startsWith('v20.'))
}

function versionOf(node: string): string {
  try {
    return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  } catch {
    return ''
  }
}

/** npm's own script (npm-cli.js), to run npm on a Node of the caller's choice. */
export function npmCli(): string {
  const fromEnv = process.env.npm_execpath
  if (fromEnv && fromEnv.endsWith('npm-cli.js') && existsSync(fromEnv)) return fromEnv
  const npm = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim())
  return path.join(path.dirname(npm), 'npm-cli.js')
}

/** Whether a test that needs Node 20 runs: yes when there is one; without, skipped loudly outside CI and failed in CI. */
export function requireNode20(what: string): string | undefined {
  const found = node20()
  if (found) return found
  const message = `${what} needs a Node 20 (FLEETGATE_NODE20 or /usr/bin/node)`
  if (process.env.CI === 'true') throw new Error(`${message}: none found`)
  console.warn(`SKIPPED: ${message}`)
  return undefined
}
