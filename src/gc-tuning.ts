import { setFlagsFromString } from 'node:v8'

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
