import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * The layering of src/ (README "Layout"), checked on every relative import, type-only ones included.
 * A module is named by its top folder under src/ ("link/") or, at the top, its file ("errors.ts").
 */
interface Rule {
  from: string
  /** When set, the only modules `from` may import (besides npm packages and node). */
  only?: string[]
  /** Modules `from` must not import. */
  not?: string[]
  why: string
}

const RULES: Rule[] = [
  { from: 'lib/', only: ['lib/'], why: 'lib/ holds small utilities that know nothing of fleetgate' },
  { from: 'protocol/', only: ['protocol/', 'lib/'], why: 'the link protocol (frames, limits, close codes, ids) is shared by server and devices and imports no server folder' },
  { from: 'metrics/', only: ['metrics/', 'lib/'], why: 'the registry and the lean metrics serve every capability and know none of them' },
  { from: 'sdk/', only: ['sdk/', 'protocol/', 'lib/'], why: 'the SDK is published on its own (fleetgate/sdk) and imports no server folder' },
  {
    from: 'sim/',
    only: ['sim/', 'sdk/', 'protocol/', 'lib/', 'auth/secrets.ts'],
    why: 'the simulator talks to the server only over the wire (it shares the constant-time secret compare, a leaf file)',
  },
  {
    from: 'storage/',
    not: ['auth/', 'cli/', 'events/', 'firmware/', 'gateway/', 'http/', 'link/', 'nats/', 'platform/', 'sdk/', 'sim/', 'app.ts', 'app-deps.ts', 'fleet-event.ts', 'server.ts', 'index.ts'],
    why: 'storage imports no route, link, event or capability module',
  },
  { from: 'nats/', only: ['nats/', 'config/'], why: 'the NATS connection helper is plumbing under every bus and knows none of them' },
  {
    from: 'events/',
    not: ['gateway/', 'platform/', 'link/', 'firmware/', 'app-deps.ts', 'app.ts', 'fleet-event.ts'],
    why: 'events/ is the transport and the stream; each feature owns its events and publishes them through the bus (src/fleet-event.ts gathers the kinds)',
  },
  { from: 'platform/', not: ['gateway/'], why: 'the two surfaces do not import each other' },
  { from: 'gateway/', not: ['platform/'], why: 'the two surfaces do not import each other' },
  { from: 'link/', not: ['gateway/', 'platform/', 'events/'], why: 'the device link serves the gateway and does not know it (it reports to a LinkObserver)' },
  { from: 'auth/', not: ['gateway/', 'platform/'], why: 'authentication imports neither surface' },
]

interface Import {
  file: string
  target: string
}

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

const moduleOf = (fileInSrc: string): string => {
  const [first, ...rest] = fileInSrc.split('/')
  return rest.length > 0 ? `${first}/` : first!.replace(/\.js$/, '.ts')
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** Every relative import of src/, as paths relative to src/. */
function importsOfSrc(): Import[] {
  return sourceFiles(SRC).flatMap((full) => {
    const file = path.relative(SRC, full).split(path.sep).join('/')
    return [...readFileSync(full, 'utf8').matchAll(IMPORT)].map((m) => ({
      file,
      target: path.relative(SRC, path.resolve(path.dirname(full), m[1]!)).split(path.sep).join('/'),
    }))
  })
}

/** One readable line per import that breaks a rule. */
function violations(imports: Import[], rules: Rule[] = RULES): string[] {
  const found: string[] = []
  for (const { file, target } of imports) {
    const from = moduleOf(file)
    const to = target.startsWith('..') ? 'outside src/' : moduleOf(target)
    for (const rule of rules) {
      if (rule.from !== from || to === from) continue
      const broken = (rule.only && !rule.only.includes(to) && !rule.only.includes(target.replace(/\.js$/, '.ts'))) || rule.not?.includes(to)
      if (broken) found.push(`src/${file} imports src/${target} — ${rule.from} ${rule.only ? `may import only ${rule.only.join(', ')}` : `must not import ${to}`}: ${rule.why}`)
    }
  }
  return found
}

describe('import rules', () => {
  it('hold for every import in src/', () => {
    const imports = importsOfSrc()
    expect(imports.length).toBeGreaterThan(300)
    expect(violations(imports)).toEqual([])
  })

  it('report each offending import on its own line', () => {
    const offending: Import[] = [
      { file: 'sdk/frames.ts', target: 'http/ids.js' },
      { file: 'platform/ota/upgrade-check.ts', target: 'gateway/releases/release-repository.js' },
      { file: 'sim/simulation.ts', target: 'errors.js' },
      { file: 'storage/paging.ts', target: 'link/device-link.js' },
      { file: 'link/link-server.ts', target: 'gateway/devices/device-repository.js' },
      { file: 'auth/auth-routes.ts', target: 'platform/platform-plugin.js' },
      { file: 'gateway/gateway-plugin.ts', target: 'platform/devices/device-store.js' },
      { file: 'protocol/frames.ts', target: 'sdk/index.js' },
      { file: 'protocol/frames.ts', target: 'errors.js' },
      { file: 'lib/is-plain-object.ts', target: 'protocol/ids.js' },
      { file: 'sim/machine/operator-auth.ts', target: 'auth/user-directory.js' },
      { file: 'events/events-route.ts', target: 'gateway/devices/binding-repository.js' },
      { file: 'events/platform-sweep.ts', target: 'platform/commands/command-queue.js' },
      { file: 'storage/settings-repository.ts', target: 'events/event-bus.js' },
      { file: 'link/link-server.ts', target: 'events/event-bus.js' },
      { file: 'nats/connect-nats.ts', target: 'link/bus/nats-subjects.js' },
    ]
    const found = violations(offending)
    expect(found).toHaveLength(offending.length)
    expect(found[0]).toBe('src/sdk/frames.ts imports src/http/ids.js — sdk/ may import only sdk/, protocol/, lib/: the SDK is published on its own (fleetgate/sdk) and imports no server folder')
    expect(violations([{ file: 'gateway/gateway-plugin.ts', target: 'link/device-link.js' }, { file: 'sim/machine/orders.ts', target: 'sim/placement/units.js' }, { file: 'sim/machine/operator-auth.ts', target: 'auth/secrets.js' }, { file: 'protocol/frames.ts', target: 'lib/is-plain-object.js' }, { file: 'platform/commands/command-queue.ts', target: 'events/event-bus.js' }, { file: 'events/create-event-bus.ts', target: 'nats/connect-nats.js' }])).toEqual([])
  })

})

/** The code of every file in src/, comments and string contents removed (crudely: enough for the checks below). */
function codeOfSrc(): { file: string; code: string }[] {
  return sourceFiles(SRC).map((full) => ({
    file: path.relative(SRC, full).split(path.sep).join('/'),
    code: readFileSync(full, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
      .replace(/'(?:[^'\\\n]|\\.)*'/g, "''"),
  }))
}

describe('one home per concept', () => {
  it('no file in src/ reads a private field (a name beginning with _) of a library object', () => {
    const dotted = codeOfSrc()
      .filter(({ code }) => /\.\s*_[A-Za-z]\w*/.test(code))
      .map(({ file }) => file)
    // Bracket access by a string literal (`socket['_receiver']`), looked for before strings are blanked.
    const bracketed = sourceFiles(SRC)
      .filter((full) => /\[\s*(['"`])_[A-Za-z]\w*\1\s*\]/.test(readFileSync(full, 'utf8')))
      .map((full) => path.relative(SRC, full).split(path.sep).join('/'))
    expect([...dotted, ...bracketed]).toEqual([])
  })

  it('constant-time secret comparison lives in auth/ only', () => {
    const offending = codeOfSrc()
      .filter(({ file, code }) => !file.startsWith('auth/') && /\btimingSafeEqual\b/.test(code))
      .map(({ file }) => file)
    expect(offending).toEqual([])
  })

  it('NATS connections are opened only by nats/connect-nats.ts', () => {
    const opening = sourceFiles(SRC)
      .filter((full) => /import\s*\{[^}]*\bconnect\b[^}]*\}\s*from\s*'nats'/.test(readFileSync(full, 'utf8')))
      .map((full) => path.relative(SRC, full).split(path.sep).join('/'))
    expect(opening).toEqual(['nats/connect-nats.ts'])
  })

  it('the link close codes are written as numbers only in protocol/close-codes.ts', () => {
    const literal = /(?<![\w.])(?:1009|1011|1012|1013|4400|4401|4408|4409)(?![\w.])/
    const offending = codeOfSrc()
      .filter(({ file, code }) => file !== 'protocol/close-codes.ts' && literal.test(code))
      .map(({ file }) => file)
    expect(offending).toEqual([])
  })
})
