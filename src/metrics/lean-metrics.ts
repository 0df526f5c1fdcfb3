import {
  validateMetricName,
  type Aggregator,
  type Counter,
  type Histogram,
  type LabelValues,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValue,
  type MetricValueWithName,
  type ObserveDataWithExemplar,
  type OpenMetricsContentType,
  type PrometheusContentType,
  type Registry,
} from 'prom-client'

type LabelValue = string | number

export interface LeanOptions<L extends string> {
  name: string
  help: string
  labelNames: readonly L[]
  /** As prom-client's: each registry exposes the metric (none is the global registry here). */
  registers: (Registry<PrometheusContentType> | Registry<OpenMetricsContentType>)[]
}

/**
 * Observations refused by a lean metric, by metric name: NaN or infinite values, and counter
 * increments below zero. prom-client throws on these (on the request that observed); a lean
 * metric leaves them out of its values, so a histogram's sum stays a number, and counts them
 * here, in every registry that holds the metric.
 */
export const REJECTED_OBSERVATIONS = 'fleetgate_metrics_rejected_observations_total'

/** What the registry reads of a metric value in the text format: the series' labels apart (prom-client's `sharedLabels`). */
interface TextValue<L extends string> {
  labels: LabelValues<'le'>
  sharedLabels: LabelValues<L>
  value: number
  metricName: string
}

const NO_LABELS = Object.freeze({})
const collectNothing = (): void => {}

/**
 * prom-client's typings give a metric's `type` as the enum `MetricType`, which the package does
 * not define at runtime: its own metrics, and the registry that writes `# TYPE`, use the strings.
 * This is the one place that bridges the typings and the runtime.
 */
function metricType(type: 'counter' | 'histogram'): MetricType {
  return type as unknown as MetricType
}

function reject(sinks: readonly LeanCounterChild[]): void {
  for (const sink of sinks) sink.inc()
}

/**
 * Counters and histograms for the per-request hot path, exposed through a prom-client registry
 * in its text formats. prom-client validates and hashes the label set on every `inc`/`observe`;
 * on a forwarded request (two histograms and a counter) that cost about a tenth of the server's
 * CPU. Here a caller asks once for the child of a label set and keeps it: an observation is a
 * check, a bucket search and two additions, and allocates nothing.
 *
 * The classes implement prom-client's `Counter` and `Histogram`, so a registry takes them as its
 * own; the calls that take a label set (`inc(labels, n)`, `observe(labels, v)`) work but are the
 * slow way. Unlike prom-client's, `reset()` zeroes the children and keeps them, so a child held
 * by a caller keeps recording; exemplars and `collect` are not supported.
 */
abstract class LeanMetric<L extends string, C extends { readonly labels: LabelValues<L>; zero(): void }> {
  /** Not readonly: an OpenMetrics registry renames a counter's family (`x_total` → `x`), as it does prom-client's own. */
  name: string
  readonly help: string
  readonly labelNames: readonly L[]
  readonly aggregator: Aggregator = 'sum'
  /** The child of this metric in each registry's rejected-observations counter. */
  readonly rejections: readonly LeanCounterChild[]
  protected readonly children = new Map<string, C>()

  constructor(options: LeanOptions<L>) {
    if (!validateMetricName(options.name)) throw new Error(`Invalid metric name: ${options.name}`)
    this.name = options.name
    this.help = options.help
    this.labelNames = [...options.labelNames]
    this.rejections = this.rejectionSinks(options)
  }

  protected rejectionSinks({ name, registers }: LeanOptions<L>): readonly LeanCounterChild[] {
    return registers.map((registry) => RejectedObservations.in(registry).labels({ metric: name }))
  }

  /** The child of one label set; keep it, it is the cheap way to record. */
  labels(labels: Record<L, LabelValue>): C
  /** The child of the label values given in the order of `labelNames`. */
  labels(...values: string[]): C
  labels(...args: [Record<L, LabelValue>] | string[]): C {
    return this.series(this.labelsOf(args))
  }

  /** Stops exposing one series; a child of it still held records nowhere. */
  remove(labels: LabelValues<L>): void
  remove(...values: string[]): void
  remove(...args: [LabelValues<L>] | string[]): void {
    this.children.delete(this.keyOf(this.labelsOf(args)))
  }

  /** Zeroes every series and keeps its child: a caller holding one keeps recording. */
  reset(): void {
    for (const child of this.children.values()) child.zero()
  }

  /** The child of a label set (missing labels are left out, as prom-client does), made on first use. */
  protected series(labels: LabelValues<L>): C {
    for (const name in labels) {
      if (!(this.labelNames as readonly string[]).includes(name)) {
        throw new Error(`Added label "${name}" is not included in initial labelset: [${this.labelNames.join(', ')}]`)
      }
    }
    const key = this.keyOf(labels)
    let child = this.children.get(key)
    if (!child) {
      const own: LabelValues<L> = {}
      for (const name of this.labelNames) {
        const value = labels[name]
        if (value !== undefined) own[name] = value
      }
      child = this.makeChild(own)
      this.children.set(key, child)
    }
    return child
  }

  protected abstract makeChild(labels: LabelValues<L>): C

  private keyOf(labels: LabelValues<L>): string {
    let key = ''
    for (const name of this.labelNames) {
      const value = labels[name]
      key += (value === undefined ? '\u0001' : String(value)) + '\u0000'
    }
    return key
  }

  private labelsOf(args: [LabelValues<L>] | string[]): LabelValues<L> {
    const [first] = args
    if (typeof first === 'object') return first
    if (args.length !== this.labelNames.length) throw new Error('Invalid number of arguments')
    const labels: LabelValues<L> = {}
    this.labelNames.forEach((name, i) => (labels[name] = String(args[i])))
    return labels
  }
}

export class LeanCounterChild<L extends string = string> implements Counter.Internal {
  value = 0

  constructor(
    readonly labels: LabelValues<L>,
    private readonly rejections: readonly LeanCounterChild[],
  ) {}

  /** Adds `by` (1 by default); a negative, NaN or infinite `by` is left out and counted as rejected. */
  inc(by = 1): void {
    if (by >= 0 && by < Infinity) this.value += by
    else reject(this.rejections)
  }

  zero(): void {
    this.value = 0
  }
}

export class LeanCounter<L extends string> extends LeanMetric<L, LeanCounterChild<L>> implements Counter<L> {
  /** Read by the registry (an OpenMetrics registry adds `_total` to a counter's samples). */
  readonly type = 'counter'

  constructor(options: LeanOptions<L>) {
    super(options)
    // A counter without labels shows 0 before its first increment, as prom-client's does.
    if (this.labelNames.length === 0) this.series({})
    for (const registry of options.registers) registry.registerMetric(this)
  }

  /**
   * The slow way: looks the label set up on every call. An object is always a label set (as
   * prom-client's counter reads it without `enableExemplars`): exemplars are not supported.
   */
  inc(labels: LabelValues<L>, by?: number): void
  inc(by?: number): void
  inc(labelsOrBy?: LabelValues<L> | number, by?: number): void {
    if (typeof labelsOrBy === 'object') this.series(labelsOrBy).inc(by)
    else this.series(NO_LABELS).inc(labelsOrBy)
  }

  protected makeChild(labels: LabelValues<L>): LeanCounterChild<L> {
    return new LeanCounterChild(labels, this.rejections)
  }

  async get(): Promise<MetricObjectWithValues<MetricValue<L>>> {
    const values: MetricValue<L>[] = []
    for (const { labels, value } of this.children.values()) values.push({ labels, value })
    return { name: this.name, help: this.help, type: metricType(this.type), values, aggregator: this.aggregator, collect: collectNothing }
  }
}

/** `fleetgate_metrics_rejected_observations_total` of one registry: made by the first lean metric registered there. */
class RejectedObservations extends LeanCounter<'metric'> {
  static in(registry: LeanOptions<string>['registers'][number]): RejectedObservations {
    const existing = registry.getSingleMetric(REJECTED_OBSERVATIONS)
    if (existing instanceof RejectedObservations) return existing
    return new RejectedObservations({
      name: REJECTED_OBSERVATIONS,
      help: 'Observations the lean metrics refused and left out (NaN or infinite values, counter increments below zero), by metric',
      labelNames: ['metric'],
      registers: [registry],
    })
  }

  /** Its own increments are always 1. */
  protected override rejectionSinks(): readonly LeanCounterChild[] {
    return []
  }
}

export class LeanHistogramChild<L extends string = string> implements Histogram.Internal<L> {
  /** Observations per bucket, not cumulative (Prometheus' cumulative counts are summed at scrape). */
  readonly perBucket: Float64Array
  sum = 0
  count = 0
  private readonly upperBounds: readonly number[]

  constructor(
    private readonly metric: LeanHistogram<L>,
    readonly labels: LabelValues<L>,
  ) {
    this.upperBounds = metric.buckets
    this.perBucket = new Float64Array(this.upperBounds.length)
  }

  /** Records one value; NaN or an infinite value is left out and counted as rejected (prom-client throws). */
  observe(value: number): void {
    if (!Number.isFinite(value)) {
      reject(this.metric.rejections)
      return
    }
    this.sum += value
    this.count++
    const bounds = this.upperBounds
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.perBucket[i]!++
        return
      }
    }
  }

  /** Observes the seconds until the returned function is called, in this series or, given labels, in that one. */
  startTimer(): (labels?: LabelValues<L>) => number {
    return this.metric.startTimer(this.labels)
  }

  zero(): void {
    this.perBucket.fill(0)
    this.sum = 0
    this.count = 0
  }
}

export class LeanHistogram<L extends string> extends LeanMetric<L, LeanHistogramChild<L>> implements Histogram<L> {
  readonly type = 'histogram'
  /** Upper bounds, ascending, without +Inf. */
  readonly buckets: readonly number[]
  /** `{ le }` of each bucket and of +Inf, made once: the registry copies labels before it changes them. */
  private readonly bucketLabels: readonly LabelValues<'le'>[]

  constructor(options: LeanOptions<L> & { buckets: readonly number[] }) {
    super(options)
    if ((this.labelNames as readonly string[]).includes('le')) throw new Error('le is a reserved label keyword')
    this.buckets = [...options.buckets].sort((a, b) => a - b)
    this.bucketLabels = [...this.buckets.map((le) => ({ le })), { le: '+Inf' }]
    // A histogram without labels shows its empty buckets before the first observation, as prom-client's does.
    if (this.labelNames.length === 0) this.series({})
    for (const registry of options.registers) registry.registerMetric(this)
  }

  /** The slow way: looks the label set up on every call. */
  observe(value: number): void
  observe(labels: LabelValues<L>, value: number): void
  /** Exemplars are not supported: `exemplarLabels` is ignored. */
  observe(observeData: ObserveDataWithExemplar<L>): void
  observe(first: LabelValues<L> | ObserveDataWithExemplar<L> | number, value?: number): void {
    if (typeof first === 'number') this.series(NO_LABELS).observe(first)
    else if (value !== undefined) this.series(first as LabelValues<L>).observe(value)
    else {
      const data = first as ObserveDataWithExemplar<L>
      this.series(data.labels ?? NO_LABELS).observe(data.value)
    }
  }

  startTimer(labels?: LabelValues<L>): (labels?: LabelValues<L>) => number {
    const started = performance.now()
    return (endLabels) => {
      const seconds = (performance.now() - started) / 1000
      this.series(endLabels ? { ...labels, ...endLabels } : (labels ?? NO_LABELS)).observe(seconds)
      return seconds
    }
  }

  /** Shows the series of a label set at zero before its first observation. */
  zero(labels: LabelValues<L>): void {
    this.series(labels).zero()
  }

  protected makeChild(labels: LabelValues<L>): LeanHistogramChild<L> {
    return new LeanHistogramChild(this, labels)
  }

  /** The values with each series' labels merged into every sample's (prom-client's JSON form). */
  async get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const text = await this.getForPromString()
    const values = text.values.map(({ labels, sharedLabels, value, metricName }): MetricValueWithName<L> => ({ labels: { ...labels, ...sharedLabels }, value, metricName }))
    return { ...text, values }
  }

  /** What the registry writes: a series' labels apart from `le`, so default labels fall where prom-client puts them. */
  async getForPromString(): Promise<Omit<MetricObjectWithValues<MetricValueWithName<L>>, 'values'> & { values: TextValue<L>[] }> {
    const values: TextValue<L>[] = []
    const bucket = `${this.name}_bucket`
    for (const child of this.children.values()) {
      let cumulative = 0
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += child.perBucket[i]!
        values.push({ labels: this.bucketLabels[i]!, sharedLabels: child.labels, value: cumulative, metricName: bucket })
      }
      values.push({ labels: this.bucketLabels[this.buckets.length]!, sharedLabels: child.labels, value: child.count, metricName: bucket })
      values.push({ labels: NO_LABELS, sharedLabels: child.labels, value: child.sum, metricName: `${this.name}_sum` })
      values.push({ labels: NO_LABELS, sharedLabels: child.labels, value: child.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: metricType(this.type), values, aggregator: this.aggregator, collect: collectNothing }
  }
}
