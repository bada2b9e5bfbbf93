import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms for the hot paths (forward-auth and the proxy answer in tens of µs). prom-client's
 * own `inc`/`observe` hash their labels on every call (1.3-1.8 µs each measured, several per request);
 * here a caller resolves a label set to its series once (app ids are configured, so the sets are
 * bounded) and then records into plain numbers. prom-client only reads them at a scrape: these are
 * registered in its registry as metrics of their own (`get()` is what the registry and the cluster
 * aggregator call), and appear in the exposition exactly as its Counter and Histogram would.
 */

type Labels = Record<string, string>;

/** What the registry reads of a metric (prom-client's own shape of `get()`, which it does not export). */
interface Exported {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
}

interface Series {
  labels: Labels;
}

/** One counter series: add to `value`. */
export interface CounterSeries extends Series {
  value: number;
}

/** One histogram series: `observe()` it. */
export interface HistogramSeries extends Series {
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

abstract class FastMetric<S extends Series> {
  protected readonly series = new Map<string, S>();
  readonly aggregator = 'sum' as const;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    // The registry calls get() and reset(); it is typed for its own classes only.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in labelNames' order), made on first use: resolve once, keep it. */
  of(...values: string[]): S {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (!series) {
      const labels: Labels = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index] ?? ''));
      this.series.set(key, (series = this.create(labels)));
    }
    return series;
  }

  reset(): void {
    for (const series of this.series.values()) this.clear(series);
  }

  protected abstract create(labels: Labels): S;
  protected abstract clear(series: S): void;
}

export class FastCounter extends FastMetric<CounterSeries> {
  readonly type = 'counter' as const;

  protected create(labels: Labels): CounterSeries {
    return { labels, value: 0 };
  }

  protected clear(series: CounterSeries): void {
    series.value = 0;
  }

  async get(): Promise<Exported> {
    const values = [...this.series.values()].map(({ labels, value }) => ({ labels: { ...labels }, value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export class FastHistogram extends FastMetric<HistogramSeries> {
  readonly type = 'histogram' as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  protected create(labels: Labels): HistogramSeries {
    return { labels, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  protected clear(series: HistogramSeries): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
  }

  /** Counts one value in its series (the first bucket whose bound it does not exceed, as Prometheus's `le`). */
  observe(series: HistogramSeries, value: number): void {
    const { buckets } = this;
    let index = 0;
    while (index < buckets.length && value > buckets[index]!) index++;
    series.counts[index]!++;
    series.sum += value;
    series.count++;
  }

  async get(): Promise<Exported> {
    const values: Exported['values'] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += counts[index]!;
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: bucketName });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: bucketName });
      values.push({ labels: { ...labels }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
