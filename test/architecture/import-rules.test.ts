import { readdirSync, readFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
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
  { from: 'metrics/', only: ['metrics/', 'lib/'], why: 'the registry and the lean metrics serve every capability and know none of them' },
  { from: 'sdk/', only: ['sdk/'], why: 'src/sdk/ only re-exports @fleetgate/device-agent for the deprecated fleetgate/sdk' },
  {
    from: 'sim/',
    only: ['sim/', 'lib/', 'auth/secrets.ts'],
    why: 'the simulator talks to the server only over the wire, through @fleetgate/device-agent (it shares the constant-time secret compare, a leaf file)',
  },
  {
    from: 'storage/',
    not: ['auth/', 'cli/', 'events/', 'firmware/', 'gateway/', 'http/', 'link/', 'nats/', 'platform/', 'sdk/', 'sim/', 'app.ts', 'app-deps.ts', 'fleet-event.ts', 'server.ts', 'index.ts'],
    why: 'storage imports no route, link, event or capability module',
  },
  { from: 'nats/', only: ['nats/', 'config/', 'auth/secrets.ts'], why: 'the NATS connection helper is plumbing under every bus and knows none of them (its signatures share the constant-time digest compare, a leaf file)' },
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

/** The layering inside packages/device-agent/src/ (the SDK's own files sit at its top). */
const AGENT_RULES: Rule[] = [
  { from: 'lib/', only: ['lib/'], why: 'lib/ holds the small utilities the package shares with the server (CRC-32, plain object)' },
  { from: 'protocol/', only: ['protocol/', 'lib/'], why: 'the link protocol (frames, limits, close codes, ids) is shared by server and devices and knows nothing of the agent' },
]

/** What the device agent may import besides its own files: Node built-ins and its two dependencies (contract §17). */
const AGENT_PACKAGES = ['ws', '@sinclair/typebox']

interface Import {
  file: string
  target: string
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SRC = path.join(ROOT, 'src/')
const AGENT_SRC = path.join(ROOT, 'packages/device-agent/src/')
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g
/** Every module specifier: `from '…'`, `import '…'`, `import('…')`. */
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g

const moduleOf = (fileInSrc: string): string => {
  const [first, ...rest] = fileInSrc.split('/')
  return rest.length > 0 ? `${first}/` : first!.replace(/\.js$/, '.ts')
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(full)
    return /\.tsx?$/.test(entry.name) ? [full] : []
  })
}

const slashed = (p: string) => p.split(path.sep).join('/')

/** Every relative import of the files under `root`, as paths relative to `root`. */
function importsOf(root: string): Import[] {
  return sourceFiles(root).flatMap((full) => {
    const file = slashed(path.relative(root, full))
    return [...readFileSync(full, 'utf8').matchAll(IMPORT)].map((m) => ({
      file,
      target: slashed(path.relative(root, path.resolve(path.dirname(full), m[1]!))),
    }))
  })
}

const importsOfSrc = () => importsOf(SRC)

/** Every relative import of the repository's own code outside packages/, as paths relative to the repository. */
function importsOutsidePackages(dirs = ['src', 'test', 'bench', 'scripts', 'web']): Import[] {
  return dirs.flatMap((dir) =>
    importsOf(path.join(ROOT, dir)).map(({ file, target }) => ({ file: `${dir}/${file}`, target: slashed(path.relative(ROOT, path.join(ROOT, dir, target))) })),
  )
}

/** One line per import that reaches into packages/ by path instead of by the package's name. */
const intoPackages = (imports: Import[]): string[] =>
  imports.filter(({ target }) => target.startsWith('packages/')).map(({ file, target }) => `${file} imports ${target} by path: import it as @fleetgate/device-agent (or a subpath it exports)`)

/** One readable line per import that breaks a rule. */
function violations(imports: Import[], rules: Rule[] = RULES, root = 'src/'): string[] {
  const found: string[] = []
  for (const { file, target } of imports) {
    const from = moduleOf(file)
    const to = target.startsWith('..') ? `outside ${root}` : moduleOf(target)
    for (const rule of rules) {
      if (rule.from !== from || to === from) continue
      const broken = (rule.only && !rule.only.includes(to) && !rule.only.includes(target.replace(/\.js$/, '.ts'))) || rule.not?.includes(to)
      if (broken) found.push(`${root}${file} imports ${root}${target} — ${rule.from} ${rule.only ? `may import only ${rule.only.join(', ')}` : `must not import ${to}`}: ${rule.why}`)
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

  it('hold inside @fleetgate/device-agent, which imports nothing outside its own src/', () => {
    const imports = importsOf(AGENT_SRC)
    expect(imports.length).toBeGreaterThan(30)
    expect(violations(imports, AGENT_RULES, 'packages/device-agent/src/')).toEqual([])
    const leaving = imports.filter(({ target }) => target.startsWith('..')).map(({ file, target }) => `packages/device-agent/src/${file} imports ${target}`)
    expect(leaving).toEqual([])
  })

  it('@fleetgate/device-agent imports only Node built-ins, ws and @sinclair/typebox, and depends on those two only', () => {
    const outside = sourceFiles(AGENT_SRC).flatMap((full) =>
      [...readFileSync(full, 'utf8').matchAll(SPECIFIER)]
        .map((m) => m[1]!)
        .filter((spec) => !spec.startsWith('.') && !isBuiltin(spec) && !AGENT_PACKAGES.some((name) => spec === name || spec.startsWith(`${name}/`)))
        .map((spec) => `${slashed(path.relative(AGENT_SRC, full))} imports ${spec}`),
    )
    expect(outside).toEqual([])
    const manifest = JSON.parse(readFileSync(path.join(AGENT_SRC, '../package.json'), 'utf8')) as { dependencies?: object; peerDependencies?: object; optionalDependencies?: object }
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual([...AGENT_PACKAGES].sort())
    expect(manifest.peerDependencies ?? {}).toEqual({})
    expect(manifest.optionalDependencies ?? {}).toEqual({})
  })

  it('the server, simulator, benches, scripts and tests import the device agent as a package, never by a path into packages/', () => {
    const imports = importsOutsidePackages()
    expect(imports.length).toBeGreaterThan(1000)
    expect(intoPackages(imports)).toEqual([])
    expect(intoPackages([{ file: 'test/sdk/x.test.ts', target: 'packages/device-agent/src/device-agent.js' }, { file: 'src/link/x.ts', target: 'src/lib/time.js' }])).toEqual([
      'test/sdk/x.test.ts imports packages/device-agent/src/device-agent.js by path: import it as @fleetgate/device-agent (or a subpath it exports)',
    ])
  })

  it('report each offending import on its own line', () => {
    const offending: Import[] = [
      { file: 'sim/frames.ts', target: 'http/ids.js' },
      { file: 'platform/ota/upgrade-check.ts', target: 'gateway/releases/release-repository.js' },
      { file: 'sim/simulation.ts', target: 'errors.js' },
      { file: 'storage/paging.ts', target: 'link/device-link.js' },
      { file: 'link/link-server.ts', target: 'gateway/devices/device-repository.js' },
      { file: 'auth/auth-routes.ts', target: 'platform/platform-plugin.js' },
      { file: 'gateway/gateway-plugin.ts', target: 'platform/devices/device-store.js' },
      { file: 'sdk/index.ts', target: 'errors.js' },
      { file: 'sim/simulation.ts', target: 'sdk/index.js' },
      { file: 'lib/time.ts', target: 'link/device-link.js' },
      { file: 'sim/machine/operator-auth.ts', target: 'auth/user-directory.js' },
      { file: 'events/events-route.ts', target: 'gateway/devices/binding-repository.js' },
      { file: 'events/platform-sweep.ts', target: 'platform/commands/command-queue.js' },
      { file: 'storage/settings-repository.ts', target: 'events/event-bus.js' },
      { file: 'link/link-server.ts', target: 'events/event-bus.js' },
      { file: 'nats/connect-nats.ts', target: 'link/bus/nats-subjects.js' },
    ]
    const found = violations(offending)
    expect(found).toHaveLength(offending.length)
    expect(found[0]).toBe(
      'src/sim/frames.ts imports src/http/ids.js — sim/ may import only sim/, lib/, auth/secrets.ts: the simulator talks to the server only over the wire, through @fleetgate/device-agent (it shares the constant-time secret compare, a leaf file)',
    )
    expect(violations([{ file: 'gateway/gateway-plugin.ts', target: 'link/device-link.js' }, { file: 'sim/machine/orders.ts', target: 'sim/placement/units.js' }, { file: 'sim/machine/operator-auth.ts', target: 'auth/secrets.js' }, { file: 'sim/machine/tasks.ts', target: 'lib/time.js' }, { file: 'platform/commands/command-queue.ts', target: 'events/event-bus.js' }, { file: 'events/create-event-bus.ts', target: 'nats/connect-nats.js' }])).toEqual([])
  })

})

/** The code of every file under `root`, comments and string contents removed (crudely: enough for the checks below). */
function codeOf(root = SRC): { file: string; code: string }[] {
  return sourceFiles(root).map((full) => ({
    file: slashed(path.relative(root, full)),
    code: readFileSync(full, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
      .replace(/'(?:[^'\\\n]|\\.)*'/g, "''"),
  }))
}

/** Files of src/ and of packages/device-agent/src/, named from the repository. */
const codeOfAll = () => [...codeOf(SRC).map((f) => ({ ...f, file: `src/${f.file}` })), ...codeOf(AGENT_SRC).map((f) => ({ ...f, file: `packages/device-agent/src/${f.file}` }))]

describe('one home per concept', () => {
  it('no file in src/ or the device agent reads a private field (a name beginning with _) of a library object', () => {
    const dotted = codeOfAll()
      .filter(({ code }) => /\.\s*_[A-Za-z]\w*/.test(code))
      .map(({ file }) => file)
    // Bracket access by a string literal (`socket['_receiver']`), looked for before strings are blanked.
    const bracketed = [SRC, AGENT_SRC]
      .flatMap((root) => sourceFiles(root))
      .filter((full) => /\[\s*(['"`])_[A-Za-z]\w*\1\s*\]/.test(readFileSync(full, 'utf8')))
      .map((full) => slashed(path.relative(ROOT, full)))
    expect([...dotted, ...bracketed]).toEqual([])
  })

  it('constant-time secret comparison lives in auth/ only', () => {
    const offending = codeOfAll()
      .filter(({ file, code }) => !file.startsWith('src/auth/') && /\btimingSafeEqual\b/.test(code))
      .map(({ file }) => file)
    expect(offending).toEqual([])
  })

  it('NATS connections are opened only by nats/connect-nats.ts', () => {
    const opening = sourceFiles(SRC)
      .filter((full) => /import\s*\{[^}]*\bconnect\b[^}]*\}\s*from\s*'nats'/.test(readFileSync(full, 'utf8')))
      .map((full) => slashed(path.relative(SRC, full)))
    expect(opening).toEqual(['nats/connect-nats.ts'])
  })

  it('the link close codes are written as numbers only in protocol/close-codes.ts of the device agent', () => {
    const literal = /(?<![\w.])(?:1009|1011|1012|1013|4400|4401|4408|4409)(?![\w.])/
    const offending = codeOfAll()
      .filter(({ file, code }) => file !== 'packages/device-agent/src/protocol/close-codes.ts' && literal.test(code))
      .map(({ file }) => file)
    expect(offending).toEqual([])
  })
})
