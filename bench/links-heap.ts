/**
 * `npm run bench -- links-heap [--links 4000]`: what an idle device link holds in the server's
 * memory. The server of `links` (in-memory SQLite) takes two rounds of idle links from a child
 * process; after each, a full GC and `process.memoryUsage()`; then V8 heap snapshots (written
 * to a temporary directory, read, and removed). Printed: RSS, JS heap, external and
 * ArrayBuffer bytes per link, and the heap's objects per link by kind (constructor, closure
 * name, string, internal array), the difference between the two snapshots divided by the
 * links of the second round, taken once with them and once after they closed. Self sizes: a Map's table shows as an internal array, not under `Map`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { openStorage } from '../src/storage/storage.js'
import { option } from './bench-options.js'
import { openLinks, youngGenerationBytes } from './links.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

interface Kind {
  count: number
  bytes: number
}

/** Objects in a heap snapshot by kind: `type:name` for objects, closures and native objects, the type for strings and code. */
function kindsIn(file: string): Map<string, Kind> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
    nodes: number[]
    strings: string[]
  }
  const fields = snapshot.snapshot.meta.node_fields
  const types = snapshot.snapshot.meta.node_types[0]
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number]
  const kinds = new Map<string, Kind>()
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const t = types[snapshot.nodes[i + type]!]!
    const n = snapshot.strings[snapshot.nodes[i + name]!]!
    const key = ['object', 'closure', 'native', 'array', 'hidden', 'object shape'].includes(t) ? `${t}: ${n.slice(0, 60)}` : t
    const kind = kinds.get(key) ?? { count: 0, bytes: 0 }
    kind.count++
    kind.bytes += snapshot.nodes[i + size]!
    kinds.set(key, kind)
  }
  return kinds
}

/** Memory after three full collections, and the resident size of V8's young generation (which V8 grows under load and keeps: not per link). */
async function settled(): Promise<NodeJS.MemoryUsage & { young: number }> {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { ...process.memoryUsage(), young: youngGenerationBytes() }
}

export default async function linksHeap(args: string[]): Promise<void> {
  const count = option(args, 'links', 4000, { integer: true })
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
    CLOUD_AUTH_USERS: JSON.stringify({ admin: { password: 'bench-admin-pw', role: 'admin' } }),
    DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: '100000',
  })
  const storage = await openStorage(config.database)
  await storage.migrate()
  const app = await buildApp(config, { storage, logger: false })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const linkUrl = `ws://127.0.0.1:${port}/api/v1/device-link`
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-links-heap-'))
  const fleets: { close(): Promise<void> }[] = []
  const linked = async () => Number(/^fleetgate_device_links (\d+)/m.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1])
  try {
    // A first round warms every code path; the measured round is the same size. The memory
    // figures come first: writing and reading a snapshot grows the heap and the RSS.
    fleets.push(await openLinks(linkUrl, 'warm', count))
    const before = await settled()
    const measured = await openLinks(linkUrl, 'idle', count)
    fleets.push(measured)
    const after = await settled()
    const second = kindsIn(writeHeapSnapshot(path.join(dir, 'with.heapsnapshot')))
    // The same state less the measured round: its links closed and gone.
    fleets.pop()
    await measured.close()
    while ((await linked()) > count) await new Promise((resolve) => setTimeout(resolve, 50))
    await settled()
    const first = kindsIn(writeHeapSnapshot(path.join(dir, 'without.heapsnapshot')))
    const per = (bytes: number) => `${(bytes / count).toFixed(0)} B`
    console.log(`${count} more idle links (after ${count} already open): per link`)
    console.log(`  RSS ${per(after.rss - before.rss)} · JS heap used ${per(after.heapUsed - before.heapUsed)} (committed ${per(after.heapTotal - before.heapTotal)}) · external ${per(after.external - before.external)} (ArrayBuffers ${per(after.arrayBuffers - before.arrayBuffers)})`)
    console.log(`  of the RSS, V8's young generation growing: ${per(after.young - before.young)} (${((after.young - before.young) / 2 ** 20).toFixed(1)} MiB, to ${(after.young / 2 ** 20).toFixed(1)} MiB; not per link: docs/deploy.md, "Sizing")`)
    const rows = [...second]
      .map(([key, kind]) => {
        const was = first.get(key) ?? { count: 0, bytes: 0 }
        return { key, objects: (kind.count - was.count) / count, bytes: (kind.bytes - was.bytes) / count }
      })
      .filter((row) => Math.abs(row.bytes) >= 4)
      .sort((a, b) => b.bytes - a.bytes)
    const total = rows.reduce((sum, row) => sum + row.bytes, 0)
    console.log(`heap snapshot, per link: ${total.toFixed(0)} B in kinds of ≥ 4 B`)
    for (const row of rows) console.log(`  ${row.bytes.toFixed(0).padStart(6)} B  ${row.objects.toFixed(2).padStart(6)} objects  ${row.key}`)
  } finally {
    for (const fleet of fleets) await fleet.close()
    rmSync(dir, { recursive: true, force: true })
    await app.close()
  }
}
