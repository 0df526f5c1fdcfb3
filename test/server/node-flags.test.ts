import { chmodSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { SERVER_NODE_FLAGS } from '../../src/gc-tuning.js'
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

  it('npm start, npm run demo and npm run bench start Node with them', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
    for (const script of ['start', 'demo', 'bench']) {
      const words = scripts[script]!.split(' ')
      expect(words[0]).toBe('node')
      // Node options go before the script; after it they would be the script's own arguments.
      const nodeOptions = words.slice(1, words.findIndex((word) => word.endsWith('.js')))
      for (const flag of SERVER_NODE_FLAGS) expect(nodeOptions).toContain(flag)
    }
  })
})
