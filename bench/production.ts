/**
 * `npm run bench -- production [part] [options]` (contract §16). Each part measures its own
 * baseline in the same run; with no part named every part runs, in order.
 * - `ingest` (bench-production-ingest.ts): events per second over the device link and
 *   frame → ack p99; `--machines 20 --window 4 --seconds 10`.
 * - `queries` (bench-production-queries.ts): the fleet query, one machine's 24 h and a 30-day
 *   series at fleet size; `--machines 10000 --days 90 --engines sqlite,postgres`.
 * - `closes` (bench-production-closes.ts): thousands of links closing at once against as many
 *   state events; `--machines 5000 --rounds 3 --engines sqlite,postgres`.
 */
import { productionIngest } from './bench-production-ingest.js'
import { productionCloses } from './bench-production-closes.js'
import { productionQueries } from './bench-production-queries.js'

const PARTS: Record<string, (args: string[]) => Promise<void>> = {
  ingest: productionIngest,
  queries: productionQueries,
  closes: productionCloses,
}

export default async function production(args: string[]): Promise<void> {
  const named = args[0] !== undefined && !args[0].startsWith('--') ? args[0] : undefined
  if (named !== undefined && !(named in PARTS)) throw new Error(`unknown part ${named}: ${Object.keys(PARTS).join(', ')}`)
  const rest = named === undefined ? args : args.slice(1)
  for (const [name, run] of Object.entries(PARTS)) if (named === undefined || named === name) await run(rest)
}
