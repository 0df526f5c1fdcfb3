/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts (compiled to dist/bench/<name>.js).
 * Every benchmark measures its own baseline in the same run and prints the ratio, since
 * absolute numbers drift on shared machines. Benchmarks talk only to 127.0.0.1.
 */
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here)
  .filter((f) => f.endsWith('.js') && !['run.js'].includes(f) && !f.startsWith('bench-'))
  .map((f) => f.slice(0, -3))

const [name, ...args] = process.argv.slice(2)
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args]`)
  process.exit(2)
}
const mod = (await import(path.join(here, `${name}.js`))) as { default: (args: string[]) => Promise<void> }
await mod.default(args)
process.exit(0)
