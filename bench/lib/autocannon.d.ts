// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds per request before it counts as a timeout. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Result {
    /** Milliseconds, whole-millisecond resolution. */
    latency: Histogram;
    /** Per-second samples; `total` is every completed request. */
    requests: Histogram & { sent: number };
    throughput: Histogram;
    /** Seconds the run lasted. */
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    catch(onRejected: (reason: unknown) => void): Promise<Result>;
  }

  export default function autocannon(options: Options): Instance;
}
