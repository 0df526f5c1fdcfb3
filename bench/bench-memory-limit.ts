/**
 * A memory limit for a process a benchmark starts (an instance of `fleet`, or the benchmark
 * process itself under BENCH_MEMORY_MAX), as a deployment gives each instance (systemd
 * `MemoryMax=`, a container's memory limit): a memory cgroup of its own under this process's
 * cgroup. Node sizes V8's heap from the limit at start, the young generation included
 * (docs/deploy.md, "Sizing"), so the command is started inside the cgroup, not moved there.
 * Needs root and a memory controller this process may use (cgroup v1, or v2 with `memory` in
 * the parent's `cgroup.subtree_control`; tried on v1 only); otherwise `memoryLimit` throws, or
 * the wrapped command fails to join the cgroup and does not start, and says why.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export interface MemoryLimit {
  /** The command to spawn instead of `command`: it joins the cgroup, then execs `command` (same pid). */
  wrap(command: string[]): string[]
  /** Removes the cgroup once its processes have exited. */
  remove(): Promise<void>
}

/** The directory of this process's memory cgroup and the name of its limit file. */
function ownMemoryCgroup(): { dir: string; limitFile: string } {
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n')
  const v1 = lines.map((line) => /^\d+:([^:]*):(.*)$/.exec(line)).find((m) => m && m[1]!.split(',').includes('memory'))
  if (v1 && existsSync('/sys/fs/cgroup/memory')) return { dir: path.join('/sys/fs/cgroup/memory', v1[2]!), limitFile: 'memory.limit_in_bytes' }
  const v2 = lines.map((line) => /^0::(.*)$/.exec(line)).find(Boolean)
  if (!v2) throw new Error('no memory cgroup found in /proc/self/cgroup')
  const dir = path.join('/sys/fs/cgroup', v2[1]!)
  if (!readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory')) {
    throw new Error(`cgroup v2: the memory controller is not delegated below ${dir} (its cgroup.subtree_control lacks "memory")`)
  }
  return { dir, limitFile: 'memory.max' }
}

export function memoryLimit(name: string, bytes: number): MemoryLimit {
  const own = ownMemoryCgroup()
  const dir = path.join(own.dir, name)
  try {
    mkdirSync(dir)
    writeFileSync(path.join(dir, own.limitFile), String(bytes))
  } catch (err) {
    throw new Error(`cannot create the memory cgroup ${dir} (root and a writable cgroup file system are needed): ${(err as Error).message}`)
  }
  return {
    wrap: (command) => ['sh', '-c', 'echo $$ > "$0" && exec "$@"', path.join(dir, 'cgroup.procs'), ...command],
    async remove() {
      // The kernel refuses (EBUSY) until the last process of the cgroup is gone.
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          return rmdirSync(dir)
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
      rmdirSync(dir)
    },
  }
}
