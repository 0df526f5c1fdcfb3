import { readdir, stat } from 'node:fs/promises'
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client'

/**
 * Metrics of the process whose cost prom-client's defaults make grow with the number of open
 * sockets, each scrape blocking the event loop meanwhile. With 16,400 descriptors open (an
 * instance holding its share of a 100,000-machine fleet) a scrape took 26 ms, half of it
 * `readdirSync('/proc/self/fd')` for `process_open_fds`, and 4–8 ms for `nodejs_active_handles`
 * (`process._getActiveHandles()`, a private API, then one object per socket grouped by
 * constructor). Here the descriptors are counted by the size Linux (6.2 and later) gives
 * `/proc/self/fd`, or else listed without blocking; the handles are left to
 * `nodejs_active_resources`, which counts the same sockets through the public
 * `process.getActiveResourcesInfo()`.
 */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix })
  // prom-client names three gauges `*_total`, which Prometheus reserves for counters (`promtool
  // check metrics` refuses them); the handles gauge goes for its cost (above).
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total', 'nodejs_active_handles']) {
    registry.removeSingleMetric(`${prefix}${name}`)
  }
  if (process.platform !== 'linux') return
  registry.removeSingleMetric(`${prefix}process_open_fds`)
  new Gauge({
    name: `${prefix}process_open_fds`,
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      const count = await openDescriptors().catch(() => undefined)
      if (count !== undefined) this.set(count)
    },
  })
}

/** How many descriptors the process has open, from /proc/self/fd. */
export async function openDescriptors(): Promise<number> {
  const { size } = await stat('/proc/self/fd')
  if (size > 0) return size
  // Before Linux 6.2 the directory reports no size: list it (the listing's own descriptor is one of the entries).
  return (await readdir('/proc/self/fd')).length - 1
}
