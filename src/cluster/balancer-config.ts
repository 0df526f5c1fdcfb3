import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The load balancers deploy/ has a configuration for. */
export type BalancerKind = 'haproxy' | 'nginx'

export interface BalancedSite {
  /** Every instance: its name (HAProxy's server name) and host:port. */
  upstreams: readonly { name: string; address: string }[]
  /** What the balancer listens on, e.g. `127.0.0.1:8080`. */
  listen: string
}

/**
 * HAProxy's health-check timing (deploy/haproxy, `CHECK_TIMING`): an instance answering 503 is
 * out after two checks (about 1.25 s), and back after two good ones. Every instance's
 * SHUTDOWN_DRAIN_CHECKS is fall + 1: 3, its default.
 */
export const HAPROXY_CHECK_TIMING = 'inter 1s fastinter 250ms downinter 1s fall 2 rise 2'

const TEMPLATES = {
  haproxy: { site: 'fleetgate.cfg.template', local: 'haproxy-local.cfg.template' },
  nginx: { site: 'fleetgate.conf.template', local: 'nginx-local.conf.template' },
} as const satisfies Record<BalancerKind, { site: string; local: string }>

/** deploy/<kind>, found from this file whether it runs from src/ or from dist/src/. */
export function templateDir(kind: BalancerKind): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'deploy', kind)
    if (existsSync(path.join(candidate, TEMPLATES[kind].site))) return candidate
    dir = path.dirname(dir)
  }
  throw new Error(`deploy/${kind}/${TEMPLATES[kind].site} not found`)
}

/**
 * The balancer's fleetgate configuration (deploy/nginx/fleetgate.conf.template, an http-level
 * fragment, or deploy/haproxy/fleetgate.cfg.template, proxy sections) with the instances and the
 * listen address filled in; `checkTiming` is HAProxy's (default HAPROXY_CHECK_TIMING).
 */
export function renderSite(kind: BalancerKind, site: BalancedSite, { checkTiming = HAPROXY_CHECK_TIMING, dir = templateDir(kind) } = {}): string {
  if (kind === 'nginx') {
    const servers = site.upstreams.map((u) => `    server ${u.address} max_fails=1 fail_timeout=1s;`)
    return fill(kind, TEMPLATES.nginx.site, dir, { UPSTREAM_SERVERS: servers.join('\n'), LISTEN: site.listen })
  }
  const servers = site.upstreams.map((u) => `    server ${u.name} ${u.address}`)
  return fill(kind, TEMPLATES.haproxy.site, dir, { SERVERS: servers.join('\n'), LISTEN: site.listen, CHECK_TIMING: checkTiming })
}

/** The rest of a whole configuration that keeps every file under `prefix` (runs as any user): nginx.conf, or HAProxy's `global`. */
export function renderLocal(kind: BalancerKind, prefix: string, dir = templateDir(kind)): string {
  return fill(kind, TEMPLATES[kind].local, dir, { PREFIX: prefix })
}

function fill(kind: BalancerKind, file: string, dir: string, values: Record<string, string>): string {
  return readFileSync(path.join(dir, file), 'utf8').replace(/@@([A-Z_]+)@@/g, (whole, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`${kind} template ${file}: no value for ${whole}`)
    return value
  })
}
