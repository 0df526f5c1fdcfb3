import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, assertBuilt, startServerProcess, type ServerProcess } from '../helpers/server-process.js'

const dataDir = () => path.join(mkdtempSync(path.join(tmpdir(), 'fg-flags-')), 'data')

async function stdoutOf(start: Promise<ServerProcess>): Promise<string> {
  const server = await start
  try {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    return server.stdout()
  } finally {
    server.child.kill('SIGTERM')
    await server.exited
  }
}

describe('the V8 flags fleetgate serve needs at start (--no-memory-reducer)', () => {
  it('the fleetgate command passes them through its shebang; plain node runs warn, naming the flag', async () => {
    assertBuilt()
    // npm makes a package's bin executable when it installs it; the kernel then runs the shebang.
    chmodSync(CLI, 0o755)
    const asCommand = await stdoutOf(startServerProcess({ DATA_DIR: dataDir() }, true))
    expect(asCommand).toMatch(/Server listening/)
    expect(asCommand).not.toMatch(/started without/)
    const plainNode = await stdoutOf(startServerProcess({ DATA_DIR: dataDir() }))
    expect(plainNode).toMatch(/Node was started without --no-memory-reducer/)
  })

  // As the user runs them; --ignore-scripts skips only the pre-script (the build, done already).
  it.each([
    ['start', /Server listening at (http:\/\/127\.0\.0\.1:\d+)/],
    ['demo', /web console +(http:\/\/127\.0\.0\.1:\d+)\//],
  ])('npm run %s serves without the warning that the flags are missing', { timeout: 60_000 }, async (script, ready) => {
    assertBuilt()
    const output = await outputOfNpmScript(script, ready)
    expect(output).not.toMatch(/started without/)
  })
})

/**
 * Runs `npm run <script>` (in its own process group: npm, its shell and Node) until `ready`
 * matches its output, checks the URL it captured answers /healthz, then stops the whole group.
 */
async function outputOfNpmScript(script: string, ready: RegExp): Promise<string> {
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
    return output
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
