/**
 * `npm run bench -- production [part] [options]` (contract §16). Each part measures its own
 * baseline in the same run; with no part named every part runs, in order.
 * - `ingest` (bench-production-ingest.ts): events per second over the device link and
 *   frame → ack p99; `--machines 20 --window 4 --seconds 10`.
 * Another part (the read side's queries) registers here beside it, under its own name.
 */
import { productionIngest } from './bench-production-ingest.js'

const PARTS: Record<string, (args: string[]) => Promise<void>> = {
  ingest: productionIngest,
}

export default async function production(args: string[]): Promise<void> {
  const named = args[0] !== undefined && !args[0].startsWith('--') ? args[0] : undefined
  if (named !== undefined && !(named in PARTS)) throw new Error(`unknown part ${named}: ${Object.keys(PARTS).join(', ')}`)
  const rest = named === undefined ? args : args.slice(1)
  for (const [name, run] of Object.entries(PARTS)) if (named === undefined || named === name) await run(rest)
}
