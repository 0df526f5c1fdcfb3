import { Type, type Static } from '@sinclair/typebox'
import { ok, type RouteTable } from '@fleetgate/device-agent'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'
import { conflict, notFound } from './validate-body.js'

export const MarketplaceEntry = Type.Object({
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  downloads: Type.Integer(),
})
export type MarketplaceEntry = Static<typeof MarketplaceEntry>

export const InstalledExtension = Type.Object({ id: Type.String(), name: Type.String(), version: Type.String(), installed: Type.Boolean() })
export type InstalledExtension = Static<typeof InstalledExtension>

const CATALOGUE: MarketplaceEntry[] = [
  { id: 'feeder-autoload', name: 'Feeder Auto-Load', version: '1.4.2', description: 'Detects tape feeders and fills the slot map', downloads: 1843 },
  { id: 'aoi-lite', name: 'AOI Lite', version: '0.9.1', description: 'Post-placement optical inspection with the upper camera', downloads: 962 },
  { id: 'paste-check', name: 'Solder Paste Check', version: '2.0.0', description: 'Flags missing or bridged paste before placement', downloads: 517 },
  { id: 'barcode-tracker', name: 'Board Barcode Tracker', version: '1.1.0', description: 'Reads a board serial with the upper camera and logs it with the order', downloads: 1290 },
  { id: 'energy-monitor', name: 'Energy Monitor', version: '0.3.5', description: 'Logs pump and motor energy per order', downloads: 204 },
]

export class ExtensionStore {
  private readonly marketplace = CATALOGUE.map((e) => ({ ...e }))
  /** Extensions the machine has (had) installed, in install order. */
  private readonly known = new Map<string, InstalledExtension & { installed_at: number; invocations: number }>()

  constructor(now: number) {
    for (const id of ['feeder-autoload', 'barcode-tracker']) {
      const entry = this.catalogueEntry(id)!
      this.known.set(id, { id, name: entry.name, version: entry.version, installed: true, installed_at: toSeconds(now), invocations: 0 })
    }
  }

  list(): InstalledExtension[] {
    return [...this.known.values()].map(({ id, name, version, installed }) => ({ id, name, version, installed }))
  }

  catalogue(): MarketplaceEntry[] {
    return this.marketplace.map((e) => ({ ...e }))
  }

  stats() {
    const installed = [...this.known.values()].filter((e) => e.installed)
    return {
      installed: installed.length,
      available: this.marketplace.length,
      usage: installed.map((e) => ({ id: e.id, invocations: e.invocations, installed_at: e.installed_at })),
    }
  }

  install(id: string, now: number): InstalledExtension {
    const entry = this.catalogueEntry(id)
    if (!entry) throw notFound('extension', id)
    if (this.known.get(id)?.installed) throw conflict('already_installed', `extension ${id} is already installed`)
    entry.downloads++
    const installed = { id, name: entry.name, version: entry.version, installed: true, installed_at: toSeconds(now), invocations: 0 }
    this.known.set(id, installed)
    return { id, name: entry.name, version: entry.version, installed: true }
  }

  uninstall(id: string): InstalledExtension {
    const extension = this.known.get(id)
    if (!extension && !this.catalogueEntry(id)) throw notFound('extension', id)
    if (!extension?.installed) throw conflict('not_installed', `extension ${id} is not installed`)
    extension.installed = false
    return { id, name: extension.name, version: extension.version, installed: false }
  }

  /** Counts a use of every installed extension (called once per placed order). */
  recordUse(): void {
    for (const e of this.known.values()) if (e.installed) e.invocations++
  }

  private catalogueEntry(id: string) {
    return this.marketplace.find((e) => e.id === id)
  }
}

export function registerExtensionRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { extensions, clock } = machine
  routes.get('/extensions', () => ok({ extensions: extensions.list() }))
  routes.get('/extensions/marketplace', () => ok({ marketplace: extensions.catalogue() }))
  routes.get('/extensions/stats', () => ok({ stats: extensions.stats() }))
  routes.post('/extensions/:eid/install', ({ params }) => ok({ installed: true, extension: extensions.install(params.eid!, clock.now()) }))
  routes.post('/extensions/:eid/uninstall', ({ params }) => ok({ uninstalled: true, extension: extensions.uninstall(params.eid!) }))
}
