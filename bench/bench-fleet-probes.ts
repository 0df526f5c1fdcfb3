/** What the fleet bench reads from outside the processes it measures: /proc, PostgreSQL's statistics, NATS's /varz, /metrics. */
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

/** utime + stime of a process in seconds (Linux /proc; 0 once it is gone); with `reaped`, also its children's that it waited for. */
export function cpuSeconds(pid: number, { reaped = false } = {}): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / 100
  } catch {
    return 0
  }
}

/** CPU seconds of PostgreSQL: the postmaster, its backends alive now, and those that ended (reaped by the postmaster). */
export function postgresCpuSeconds(postmaster: number): number {
  const [, ...backends] = withChildren(postmaster)
  return cpuSeconds(postmaster, { reaped: true }) + backends.reduce((total, pid) => total + cpuSeconds(pid), 0)
}

/** VmRSS of a process in bytes (0 once it is gone). */
export function rssBytes(pid: number): number {
  try {
    const line = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return Number(line?.[1] ?? 0) * 1024
  } catch {
    return 0
  }
}

/** A process and its children (one level: PostgreSQL's backends under the postmaster). */
export function withChildren(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      if (ppid === pid) children.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return [pid, ...children]
}

/** The open-file limit of a process (this one by default; its children inherit it). */
export function openFileLimit(pid: number | 'self' = 'self'): number {
  const line = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))
  return Number(line?.[1] ?? Infinity)
}

export interface PostgresCounters {
  /** Sum of pg_stat_statements calls over every statement. */
  statements: number
  /** pg_stat_database xact_commit + xact_rollback of the fleet's database. */
  transactions: number
  /** pg_stat_database deadlocks: batches of rows locked in different orders would show here. */
  deadlocks: number
  /** pg_stat_database sessions (PostgreSQL ≥ 14; NaN before): connections opened, each a new backend process. */
  sessions: number
}

export async function postgresCounters(client: pg.Client, database: string): Promise<PostgresCounters> {
  const statements = await client.query<{ calls: string }>('select coalesce(sum(calls), 0)::text as calls from pg_stat_statements')
  const db = await client.query<{ xacts: string; deadlocks: string; sessions: string | null }>(
    "select (xact_commit + xact_rollback)::text as xacts, deadlocks::text as deadlocks, to_jsonb(d) ->> 'sessions' as sessions from pg_stat_database d where datname = $1",
    [database],
  )
  const row = db.rows[0]
  return { statements: Number(statements.rows[0]!.calls), transactions: Number(row?.xacts ?? 0), deadlocks: Number(row?.deadlocks ?? 0), sessions: Number(row?.sessions ?? NaN) }
}

/** The statements that ran most often since `pg_stat_statements_reset()`, for the report. */
export async function topStatements(client: pg.Client, limit: number): Promise<{ calls: number; query: string }[]> {
  const rows = await client.query<{ calls: string; query: string }>('select s.calls::text as calls, s.query from pg_stat_statements s order by s.calls desc limit $1', [limit])
  return rows.rows.map((r) => ({ calls: Number(r.calls), query: r.query.replace(/\s+/g, ' ').slice(0, 110) }))
}

export async function natsCounters(monitorUrl: string): Promise<{ inMsgs: number; outMsgs: number }> {
  const varz = (await (await fetch(`${monitorUrl}/varz`)).json()) as { in_msgs: number; out_msgs: number }
  return { inMsgs: varz.in_msgs, outMsgs: varz.out_msgs }
}

/** One instance's /metrics text (a scrape; prom-client resets its event-loop delay histogram at each). */
async function metricsOf(instanceUrl: string): Promise<string> {
  return (await fetch(`${instanceUrl}/metrics`, { signal: AbortSignal.timeout(15_000) })).text()
}

/** How long one scrape of an instance's /metrics takes, in ms (its event loop does nothing else while it collects). */
export async function scrapeMs(instanceUrl: string): Promise<number> {
  const started = performance.now()
  await metricsOf(instanceUrl)
  return performance.now() - started
}

/** The `fleetgate_device_links` gauge of one instance. */
export async function linksOf(instanceUrl: string): Promise<number> {
  const text = await metricsOf(instanceUrl)
  return Number(/^fleetgate_device_links (\d+)/m.exec(text)?.[1] ?? NaN)
}

/**
 * The longest event-loop delay of an instance since its previous scrape (prom-client resets
 * the delay histogram at each scrape), in ms: a stall of the instance shows here.
 */
export async function eventLoopMaxMs(instanceUrl: string): Promise<number> {
  const text = await metricsOf(instanceUrl)
  return Number(/^fleetgate_nodejs_eventloop_lag_max_seconds ([\d.e+-]+)/m.exec(text)?.[1] ?? NaN) * 1000
}

/** CPU time of the whole machine so far, busy and in all (seconds, from /proc/stat): the share busy between two readings. */
export function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = fields.reduce((a, b) => a + b, 0)
  const idle = fields[3]! + (fields[4] ?? 0)
  return { busy: (total - idle) / 100, total: total / 100 }
}

/** Descriptors a process has open now (NaN when it cannot be read). */
export function openDescriptors(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length
  } catch {
    return NaN
  }
}

export interface GcTotals {
  /** Seconds in scavenges of the young generation so far. */
  minor: number
  /** Seconds in mark-compacts so far. */
  major: number
  /** Scavenges so far that took longer than 10 ms. */
  longMinor: number
}

/** An instance's garbage collections so far, from prom-client's GC histogram on its /metrics. */
export async function gcTotals(instanceUrl: string): Promise<GcTotals> {
  const text = await metricsOf(instanceUrl)
  const read = (series: string) => Number(new RegExp(`^fleetgate_nodejs_gc_duration_seconds_${series} ([\\d.e+-]+)`, 'm').exec(text)?.[1] ?? 0)
  return {
    minor: read('sum\\{kind="minor"\\}'),
    major: read('sum\\{kind="major"\\}'),
    longMinor: read('count\\{kind="minor"\\}') - read('bucket\\{le="0.01",kind="minor"\\}'),
  }
}

/** The size of an instance's V8 young generation (new space) now, from its /metrics: V8 grows it with the load, up to a maximum it sizes from the memory it may use. */
export async function youngGenerationBytes(instanceUrl: string): Promise<number> {
  const text = await metricsOf(instanceUrl)
  return Number(/^fleetgate_nodejs_heap_space_size_total_bytes\{space="new"\} ([\d.e+-]+)/m.exec(text)?.[1] ?? NaN)
}
