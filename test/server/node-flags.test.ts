import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, assertBuilt, startServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { commandLineOf, nodeFlagsBefore, processesOfGroup } from '../helpers/node-command-line.js'

// Not named after flags: the log names DATA_DIR (where the generated console token is written).
const dataDir = () => path.join(mkdtempSync(path.join(tmpdir(), 'fg-bare-node-')), 'data')

/** Any log line about Node or V8 flags (the server once warned when one was missing). */
const FLAG_WARNING = /flag|memory.reducer|pretenur|started without|NODE_OPTIONS/i

async function served(start: Promise<ServerProcess>): Promise<{ output: string; flags: string[] }> {
  const server = await start
  try {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    return { output: server.stdout() + server.stderr(), flags: nodeFlagsBefore(commandLineOf(server.child.pid!), 'main.js') }
  } finally {
    server.child.kill('SIGTERM')
    await server.exited
  }
}

describe('fleetgate serve needs no Node flags (they are a deployment option: README "Node flags (optional)")', () => {
  it('started as plain `node dist/src/cli/main.js serve` it serves /healthz and logs nothing about flags', async () => {
    const { output, flags } = await served(startServerProcess({ DATA_DIR: dataDir() }))
    expect(flags).toEqual([])
    expect(output).toMatch(/Server listening/)
    expect(output).not.toMatch(FLAG_WARNING)
  })

  it('the fleetgate command (its shebang) runs Node with no flags and serves /healthz without a word about flags', async () => {
    assertBuilt()
    // npm makes a package's bin executable when it installs it; the kernel then runs the shebang.
    chmodSync(CLI, 0o755)
    const { output, flags } = await served(startServerProcess({ DATA_DIR: dataDir() }, true))
    expect(flags).toEqual([])
    expect(output).toMatch(/Server listening/)
    expect(output).not.toMatch(FLAG_WARNING)
  })

  // As the user runs them; --ignore-scripts skips only the pre-script (the build, done already).
  it.each([
    ['start', 'main.js serve', /Server listening at (http:\/\/127\.0\.0\.1:\d+)/],
    ['demo', 'main.js demo', /web console +(http:\/\/127\.0\.0\.1:\d+)\//],
  ])('npm run %s runs Node with no flags, serves /healthz and logs nothing about flags', { timeout: 60_000 }, async (script, command, ready) => {
    assertBuilt()
    const { output, flags } = await runNpmScript(script, command, ready)
    expect(flags).toEqual([])
    expect(output).not.toMatch(FLAG_WARNING)
  })
})

/**
 * Runs `npm run <script>` (in its own process group: npm, its shell and Node) until `ready`
 * matches its output, checks the URL it captured answers /healthz, reads the flags of the Node
 * process running `command`, then stops the whole group.
 */
async function runNpmScript(script: string, command: string, ready: RegExp): Promise<{ output: string; flags: string[] }> {
  const child = spawn('npm', ['run', script, '--ignore-scripts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir(), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  const exited = once(child, 'exit')
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString()
        const match = ready.exec(output)
        if (match) resolve(match[1]!)
      }
      child.stdout!.on('data', read)
      child.stderr!.on('data', read)
      exited.then(([code]) => reject(new Error(`npm run ${script} exited with ${code} before it was ready:\n${output}`)))
    })
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    const nodes = processesOfGroup(child.pid!, command).filter((pid) => commandLineOf(pid)[0] !== 'sh' && !commandLineOf(pid).includes('-c'))
    expect(nodes).toHaveLength(1)
    return { output, flags: nodeFlagsBefore(commandLineOf(nodes[0]!), 'main.js') }
  } finally {
    if (processGroupAlive(child.pid!)) process.kill(-child.pid!, 'SIGTERM')
    if (child.exitCode === null && child.signalCode === null) await exited
    // npm and its shell may go before Node has finished its shutdown: the test leaves no server behind.
    await expect.poll(() => processGroupAlive(child.pid!), { timeout: 15_000 }).toBe(false)
  }
}

function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}
