import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { requireNode20 } from '../helpers/node20.js'

/**
 * Contract §17: `@fleetgate/device-agent` is what a machine installs. Packed as npm would publish
 * it, installed alone into an empty directory, it brings no server dependency and no native addon,
 * weighs under 200 KB, and links a machine to a real fleetgate from Node 20.
 */

const run = promisify(execFile)
const PACKAGE_DIR = path.resolve('packages/device-agent')
const MAX_PACKED_BYTES = 200 * 1024
const SERVER_PACKAGES = ['fastify', 'kysely', 'pg', 'better-sqlite3', 'nats']
/** What installing the agent may bring: itself and its two dependencies (and nothing they depend on: both have none). */
const INSTALLED = ['@fleetgate/device-agent', '@sinclair/typebox', 'ws']

const NODE20 = { node: requireNode20('the Node 20 run of the packed device agent') }

interface PackResult {
  filename: string
  size: number
  files: { path: string }[]
}

/** Every file under `dir`, relative to it, with `/` separators. */
function filesUnder(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full, base) : [path.relative(base, full).split(path.sep).join('/')]
  })
}

/** The packages under a node_modules folder, nested ones included, by name. */
function installedPackages(nodeModules: string): string[] {
  const names: string[] = []
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue
    const dirs = entry.name.startsWith('@') ? readdirSync(path.join(nodeModules, entry.name)).map((n) => `${entry.name}/${n}`) : [entry.name]
    for (const name of dirs) {
      names.push(name)
      const nested = path.join(nodeModules, name, 'node_modules')
      if (readdirSync(path.join(nodeModules, name)).includes('node_modules')) names.push(...installedPackages(nested))
    }
  }
  return names
}

describe('@fleetgate/device-agent, packed and installed alone', () => {
  let work: string
  let packed: PackResult
  let machineDir: string

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'fleetgate-agent-'))
    // --ignore-scripts: pack the dist/ the build made (prepack would rebuild it under the other test files' feet).
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: PACKAGE_DIR })
    packed = (JSON.parse(stdout) as PackResult[])[0]!
    machineDir = path.join(work, 'machine')
    mkdirSync(machineDir)
    writeFileSync(path.join(machineDir, 'package.json'), JSON.stringify({ name: 'a-machine', version: '1.0.0', private: true, type: 'module' }))
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(work, packed.filename)], { cwd: machineDir, timeout: 120_000 })
  }, 180_000)

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('packs under 200 KB: package.json, README.md and the built dist/ of every source file, nothing else', () => {
    expect(packed.size).toBeLessThan(MAX_PACKED_BYTES)
    const sources = filesUnder(path.join(PACKAGE_DIR, 'src')).filter((f) => f.endsWith('.ts'))
    const built = sources.flatMap((f) => [`dist/${f.replace(/\.ts$/, '.js')}`, `dist/${f.replace(/\.ts$/, '.d.ts')}`])
    expect(packed.files.map((f) => f.path).sort()).toEqual(['README.md', 'package.json', ...built].sort())
  })

  it('declares engines node >=20 and exports each entry with its types, all present in the tarball', () => {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      engines: { node: string }
      exports: Record<string, string | { types: string; default: string }>
    }
    expect(manifest.engines.node).toBe('>=20')
    const inTarball = new Set(packed.files.map((f) => `./${f.path}`))
    for (const [entry, target] of Object.entries(manifest.exports)) {
      const targets = typeof target === 'string' ? [target] : [target.types, target.default]
      if (typeof target !== 'string') expect(target.types, entry).toMatch(/\.d\.ts$/)
      for (const file of targets) expect(inTarball.has(file), `${entry} → ${file}`).toBe(true)
    }
  })

  it('installs with no server dependency and no native addon: only itself, ws and @sinclair/typebox', () => {
    const nodeModules = path.join(machineDir, 'node_modules')
    const installed = installedPackages(nodeModules)
    expect(installed.filter((name) => SERVER_PACKAGES.includes(name))).toEqual([])
    expect(filesUnder(nodeModules).filter((f) => f.endsWith('.node'))).toEqual([])
    expect(installed.sort()).toEqual(INSTALLED)
  })

  describe.skipIf(!NODE20.node)('on Node 20, against a real fleetgate', () => {
    let gw: GatewayApp
    beforeAll(async () => {
      gw = await startGatewayApp('sqlite')
    })
    afterAll(() => gw?.close())

    it('links a machine: registered, listed alive by the gateway, answers a forwarded request, closes cleanly', async () => {
      writeFileSync(
        path.join(machineDir, 'machine.mjs'),
        `import { DeviceAgent, RouteTable, ok } from '@fleetgate/device-agent'
import { isIdentifier } from '@fleetgate/device-agent/protocol'
import { crc32Hex } from '@fleetgate/device-agent/lib'

const [url, deviceId] = process.argv.slice(2)
if (!isIdentifier(deviceId)) throw new Error('bad device id')
const routes = new RouteTable().get('/hardware/position', () => ok({ x: 1, y: 2, z: 3, r: 0, node: process.version, crc: crc32Hex(Buffer.from('123456789')) }))
const agent = new DeviceAgent({ url, deviceId, key: 'node20-machine-key-0001', version: '1.0.0', routes, status: () => ({ node: process.version }) })
agent.on('registered', (frame) => console.log(JSON.stringify({ registered: frame.device_id, node: process.version })))
process.stdin.on('end', async () => {
  await agent.close()
  console.log(JSON.stringify({ closed: true }))
})
process.stdin.resume()
agent.start()
`,
      )
      const deviceId = 'pnp-node20'
      const machine = spawn(NODE20.node!, ['machine.mjs', gw.url, deviceId], { cwd: machineDir, stdio: ['pipe', 'pipe', 'pipe'] })
      let stderr = ''
      machine.stderr.on('data', (d) => (stderr += d))
      const exited = once(machine, 'exit')
      const lines = createInterface({ input: machine.stdout })[Symbol.asyncIterator]()
      try {
        const first = await lines.next()
        expect(first.done, stderr).toBe(false)
        expect(JSON.parse(first.value as string)).toEqual({ registered: deviceId, node: expect.stringMatching(/^v20\./) })

        const root = await gw.auth('root')
        await expect
          .poll(async () => (await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${deviceId}`, headers: { authorization: root } })).json().device, { timeout: 10_000 })
          .toMatchObject({ device_id: deviceId, version: '1.0.0', registered: true, connected: true, alive: true })
        const forwarded = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${deviceId}/hardware/position`, headers: { authorization: root } })
        expect(forwarded.statusCode).toBe(200)
        expect(forwarded.body).toContain('"crc":"cbf43926"')
        expect(forwarded.body).toMatch(/"node":"v20\./)

        machine.stdin.end()
        expect(JSON.parse((await lines.next()).value as string)).toEqual({ closed: true })
        const [code] = await exited
        expect(code, stderr).toBe(0)
        await expect
          .poll(async () => (await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${deviceId}`, headers: { authorization: root } })).json().device, { timeout: 10_000 })
          .toMatchObject({ connected: false, alive: false })
      } finally {
        if (machine.exitCode === null) machine.kill()
      }
    }, 60_000)
  })
})
