import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FastCounter, FastHistogram } from '../../src/operations/fastMetrics.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];

/**
 * The hot paths record into series of their own (operations/fastMetrics.ts); a scrape must read exactly what
 * prom-client's own Counter and Histogram would have exposed for the same observations, or dashboards
 * and alerts would read something else.
 */
describe('fast counters and histograms', () => {
  it('expose what prom-client would, sample for sample', async () => {
    const own = new Registry();
    const fast = new Registry();
    const counter = new Counter({ name: 'x_requests_total', help: 'h', labelNames: ['area', 'app'], registers: [own] });
    const histogram = new Histogram({ name: 'x_seconds', help: 'h', labelNames: ['area', 'app'], buckets: BUCKETS, registers: [own] });
    const fastCounter = new FastCounter('x_requests_total', 'h', ['area', 'app'], fast);
    const fastHistogram = new FastHistogram('x_seconds', 'h', ['area', 'app'], BUCKETS, fast);

    // Values on the bounds too: Prometheus's le is "less than or equal".
    const observations: Array<[string, string, number]> = [
      ['proxy', 'wiki', 0.0005],
      ['proxy', 'wiki', 0.001],
      ['proxy', 'wiki', 0.02],
      ['forward_auth', '', 2],
      ['proxy', 'wiki', 1],
      ['forward_auth', 'vault', 0.1],
    ];
    for (const [area, app, seconds] of observations) {
      counter.labels(area, app).inc();
      histogram.labels(area, app).observe(seconds);
      fastCounter.of(area, app).value++;
      fastHistogram.observe(fastHistogram.of(area, app), seconds);
    }
    expect(await fast.metrics()).toBe(await own.metrics());
    // What the cluster aggregator reads from each worker: the same, but for exemplars (never used here).
    const withoutExemplars = (metrics: unknown) => JSON.parse(JSON.stringify(metrics, (key, value: unknown) => (key === 'exemplar' ? undefined : value)));
    expect(withoutExemplars(await fast.getMetricsAsJSON())).toEqual(withoutExemplars(await own.getMetricsAsJSON()));

    own.resetMetrics();
    fast.resetMetrics();
    expect(await fast.getMetricsAsJSON()).toEqual([
      expect.objectContaining({ name: 'x_requests_total', values: expect.arrayContaining([expect.objectContaining({ value: 0 })]) }),
      expect.objectContaining({ name: 'x_seconds' }),
    ]);
  });

  it('resolve a label set to one series, once', () => {
    const counter = new FastCounter('y_total', 'h', ['app'], new Registry());
    expect(counter.of('wiki')).toBe(counter.of('wiki'));
    expect(counter.of('wiki')).not.toBe(counter.of('vault'));
  });
});
