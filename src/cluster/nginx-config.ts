import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export interface NginxSite {
  /** host:port of every instance. */
  upstreams: readonly string[]
  /** `listen` argument, e.g. `127.0.0.1:8080`. */
  listen: string
}

/** deploy/nginx, found from this file whether it runs from src/ or from dist/src/. */
export function nginxTemplateDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'deploy', 'nginx')
    if (existsSync(path.join(candidate, 'fleetgate.conf.template'))) return candidate
    dir = path.dirname(dir)
  }
  throw new Error('deploy/nginx/fleetgate.conf.template not found')
}

/** deploy/nginx/fleetgate.conf.template with the instances and the listen address filled in. */
export function renderSite(site: NginxSite, templateDir = nginxTemplateDir()): string {
  const servers = site.upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=1s;`).join('\n')
  return fill(readFileSync(path.join(templateDir, 'fleetgate.conf.template'), 'utf8'), { UPSTREAM_SERVERS: servers, LISTEN: site.listen })
}

/** A whole nginx.conf that keeps every file under `prefix` (runs as any user). */
export function renderLocalNginx(prefix: string, templateDir = nginxTemplateDir()): string {
  return fill(readFileSync(path.join(templateDir, 'nginx-local.conf.template'), 'utf8'), { PREFIX: prefix })
}

function fill(template: string, values: Record<string, string>): string {
  const text = template.replace(/@@([A-Z_]+)@@/g, (whole, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`nginx template: no value for ${whole}`)
    return value
  })
  return text
}
