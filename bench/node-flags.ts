/**
 * The Node flags of every benchmark contender, chosen here and nowhere else: every server process
 * a benchmark starts (bare, floor, fleetgate, `fleetgate serve`, the cluster's instances) is
 * started with them, and `run.ts` starts the benchmark process itself with them, so the servers
 * that run inside it (links, events, console) and its forked helpers have them too.
 *
 * Default: none, as fleetgate ships (`node dist/src/cli/main.js serve`). `BENCH_NODE_FLAGS`
 * overrides them, space-separated, e.g. the optional deployment flags of the README:
 * `BENCH_NODE_FLAGS="--no-memory-reducer --no-allocation-site-pretenuring" npm run bench -- proxy`.
 */
export function benchNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)
}

export const BENCH_NODE_FLAGS: readonly string[] = benchNodeFlags()
