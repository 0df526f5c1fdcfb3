import { setFlagsFromString } from 'node:v8'

/**
 * V8 flags the server process must be started with: V8 reads them when the heap is set up, so
 * setting them later has no effect, and Node refuses them in NODE_OPTIONS. `npm start`, the
 * `fleetgate` command (its shebang), the local cluster and the benchmarks pass them; `serve()`
 * warns when they are missing.
 *
 * `--no-memory-reducer`: when a server that was busy goes idle for about half a minute, V8's
 * memory reducer runs "reduce" mark-compacts to give memory back. In every measured run (4 of 4,
 * proxy load with 60 s pauses) the server came back from the second such pause ~20 % slower for
 * good (35–36 µs of CPU per forwarded request instead of 29–31) while its scavenges and
 * mark-compacts took about as long as before the pause: the slow-down is in the code run
 * afterwards. With the flag, 3 of 3 runs kept 30–32 µs through every pause. The cost: an idle
 * server keeps the heap it grew under load (still collected by the usual limits) instead of
 * shrinking it: the reduce had taken RSS from ~217 MB down to ~165–175 MB.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--no-memory-reducer']

/** The server flags this process was started without. */
export function missingServerFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SERVER_NODE_FLAGS.filter((flag) => !execArgv.includes(flag))
}

/**
 * Turns off V8's allocation-site pretenuring in this process. `serve()` calls it before anything
 * else; so does every server of the benchmarks.
 *
 * Why: when most objects allocated at one site of the code survive their first scavenges, V8
 * allocates that site's objects straight in the old space from then on, and does not go back.
 * Right after a start the young generation is still small, so the objects of requests waiting
 * on a device survive it, and V8 tenured sites that allocate per request
 * (`--trace-pretenuring-statistics` shows the "=> tenure" decisions). In 18 of 26 measured starts
 * under the proxy bench's load the server then stayed slow for good: the old space filled with
 * dead requests (17–18 mark-compacts where a good start had 2), each scavenge took 4–10 ms
 * instead of 1 ms scanning their pointers, and a forwarded request cost ~40 % more CPU at
 * 226–237 MB of peak RSS instead of 135–140 MB. With pretenuring off, none of 9 starts did.
 *
 * V8 reads this flag at every garbage collection, so setting it at run time takes effect (unlike
 * heap sizes): it holds however the process was started (npm start, the bin, a container).
 * test/server/gc-tuning.test.ts checks that on the running Node.
 */
export function disablePretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring')
}
