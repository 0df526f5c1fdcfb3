import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'

const PACKAGE = path.resolve('packages/device-agent')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sources(full) : entry.name.endsWith('.ts') ? [full] : []
  })
}

/**
 * Vitest global setup: the suite imports `@fleetgate/device-agent` as a package, that is its
 * built `dist/`. Refuse to run against a missing or stale build rather than test old code.
 */
export default function assertDeviceAgentBuilt(): void {
  const src = path.join(PACKAGE, 'src')
  for (const file of sources(src)) {
    const built = path.join(PACKAGE, 'dist', path.relative(src, file)).replace(/\.ts$/, '.js')
    let stale: boolean
    try {
      stale = statSync(built).mtimeMs < statSync(file).mtimeMs
    } catch {
      stale = true
    }
    if (stale) {
      throw new Error(`${path.relative(process.cwd(), built)} is missing or older than its source: run \`npm run build:agent\` (npm test and npm run build do it first)`)
    }
  }
}
