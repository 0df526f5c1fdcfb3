import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { RESERVED_DESCRIPTORS } from '../../src/link/link-options.js'
import { SHUTDOWN_GRACE_MS } from '../../src/server.js'
import { PRODUCTION_ENV } from '../helpers/production-env.js'

const UNIT = path.resolve('deploy/systemd/fleetgate@.service')
const text = readFileSync(UNIT, 'utf8')

/** The unit's `[Service]` settings as systemd reads them for instance `instance` on host `host` (last value of a key, `Environment=` gathered). */
function serviceOf(instance: string, host = 'gw-01.example') {
  const lines = text
    .replaceAll('%i', instance)
    .replaceAll('%H', host)
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
  const start = lines.indexOf('[Service]')
  const end = lines.findIndex((line, k) => k > start && line.startsWith('['))
  const settings = new Map<string, string>()
  const environment: Record<string, string> = {}
  for (const line of lines.slice(start + 1, end)) {
    const [key, value] = [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]
    if (key === 'Environment') for (const pair of value.split(/\s+/)) environment[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1)
    settings.set(key, value)
  }
  return { settings, environment }
}

/** The configuration of an instance: the unit's environment over the shared settings production requires (/etc/fleetgate/fleetgate.env). */
const configOf = (environment: Record<string, string>) =>
  loadConfig({ ...PRODUCTION_ENV, CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'not-the-default', role: 'admin' } }), ...environment })

describe('deploy/systemd/fleetgate@.service', () => {
  it.each(['1', '9'])('gives instance %s a configuration a production server accepts, with its own port, id and data directory', (instance) => {
    const { environment } = serviceOf(instance)
    const config = configOf(environment)
    expect(config.production).toBe(true)
    expect(config.port).toBe(8080 + Number(instance))
    expect(config.instanceId).toBe(`gw-01.example-${instance}`)
    expect(config.dataDir).toBe(`/var/lib/fleetgate/${instance}`)
    expect(serviceOf(instance).settings.get('StateDirectory')).toBe(`fleetgate/${instance}`)
  })

  it('starts the built command line and leaves it time to drain and stop before systemd kills it', () => {
    const { settings, environment } = serviceOf('1')
    expect(settings.get('ExecStart')).toBe('/usr/bin/node dist/src/cli/main.js serve')
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> }
    expect(pkg.bin.fleetgate).toBe('dist/src/cli/main.js')
    expect(existsSync('src/cli/main.ts')).toBe(true)
    const { maxMs } = configOf(environment).shutdownDrain
    expect(maxMs).toBeGreaterThan(0)
    expect(Number(settings.get('TimeoutStopSec')) * 1000).toBeGreaterThan(maxMs + SHUTDOWN_GRACE_MS)
  })

  it('sets the memory limit V8 sizes its heap from and room for a lost instance share of links', () => {
    const { settings } = serviceOf('1')
    expect(settings.get('MemoryMax')).toMatch(/^\d+[KMG]$/)
    // 100,000 machines on 6 instances: 20,000 each after a loss, plus the reserved descriptors.
    expect(Number(settings.get('LimitNOFILE'))).toBeGreaterThanOrEqual(20_000 + RESERVED_DESCRIPTORS)
    // V8 compiles code at run time: a write-xor-execute rule would stop it.
    expect(settings.has('MemoryDenyWriteExecute')).toBe(false)
  })

  it('is a unit systemd reads without a warning', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-unit-'))
    try {
      // verify checks that ExecStart's program exists: point it at this Node.
      const unit = path.join(dir, 'fleetgate@1.service')
      writeFileSync(unit, text.replace('ExecStart=/usr/bin/node', `ExecStart=${process.execPath}`))
      const verify = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' })
      expect(verify.error, 'systemd-analyze (Debian package systemd) is needed').toBeUndefined()
      expect(verify.stderr.trim()).toBe('')
      expect(verify.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
