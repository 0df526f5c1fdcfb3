/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts (compiled to dist/bench/<name>.js).
 * Every benchmark measures its own baseline in the same run and prints the ratio, since
 * absolute numbers drift on shared machines. Benchmarks talk only to 127.0.0.1.
 *
 * With BENCH_NODE_FLAGS set (node-flags.ts), this process starts the benchmark in a child Node
 * given those flags: the servers some benchmarks run in their own process get the same flags as
 * the server processes the others start. With BENCH_MEMORY_MAX=<MiB> that child starts in a
 * memory cgroup of that size (bench-memory-limit.ts), as a deployment's `MemoryMax=` would give
 * the server: for the benchmarks whose server runs in their own process (links, links-heap,
 * events, console); the processes it forks share the limit.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { memoryLimit } from './bench-memory-limit.js'
import { BENCH_NODE_FLAGS } from './node-flags.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here)
  .filter((f) => f.endsWith('.js') && !['run.js'].includes(f) && !f.startsWith('bench-'))
  .map((f) => f.slice(0, -3))

const [name, ...args] = process.argv.slice(2)
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args]`)
  process.exit(2)
}
const memoryMaxMiB = Number(process.env.BENCH_MEMORY_MAX ?? 0)
if (!Number.isInteger(memoryMaxMiB) || memoryMaxMiB < 0) throw new Error('BENCH_MEMORY_MAX must be a whole number of MiB')
if ((BENCH_NODE_FLAGS.length > 0 || memoryMaxMiB > 0) && !process.env.BENCH_CHILD) {
  const memory = memoryMaxMiB > 0 ? memoryLimit(`fleetgate-bench-${process.pid}`, memoryMaxMiB * 2 ** 20) : undefined
  const command = [process.execPath, ...process.execArgv, ...BENCH_NODE_FLAGS, fileURLToPath(import.meta.url), name, ...args]
  const [file, ...rest] = memory ? memory.wrap(command) : command
  const child = spawn(file!, rest, { stdio: 'inherit', env: { ...process.env, BENCH_CHILD: '1' } })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal))
  const [code] = (await once(child, 'exit')) as [number | null]
  await memory?.remove()
  process.exit(code ?? 1)
}
const mod = (await import(path.join(here, `${name}.js`))) as { default: (args: string[]) => Promise<void> }
await mod.default(args)
process.exit(0)
