import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { performance } from 'node:perf_hooks';
import { FastCounter, FastHistogram, type HistogramSeries } from './fastMetrics.js';
import type { DatabaseStats } from '../storage/database.js';

/** What the session cache reports (sessions/sessionCache.ts): counters since start, and its size now. */
export interface SessionCacheStats {
  hits: number;
  misses: number;
  entries: number;
  /** Estimated bytes of the entries held. */
  bytes: number;
  /** The budget (session.cache.maxMemory). */
  maxBytes: number;
  evictions: { budget: number; ttl: number; invalidation: number };
}

/**
 * Prometheus metrics (docs/operations/metrics.md lists each one). Services see the narrow `Metrics`
 * interface of record functions, never prom-client's objects; with metrics off it is `NO_METRICS`,
 * whose functions do nothing, so the hot paths pay a call at most.
 *
 * Every label is bounded by the configuration: an area from a closed set, an app or provider id that
 * exists (anything a client names that does not is recorded as ""), a status as its class, a rule as its
 * place in the app's policy ("allow[0]"), an outcome from the error catalogue. Never a user, a path or a
 * raw value a client chose: each would make a new series, and a client could grow them without end.
 */

/** Where a request was answered: the portal's pages, its JSON API, the OpenID Provider, a forward-auth check, or an app behind the proxy. */
export type Area = 'portal' | 'api' | 'oidc' | 'forward_auth' | 'proxy';
/** What deciding access said; `refused` is a forward-auth request that could not be judged (untrusted peer, bad headers). */
export type Decision = 'allowed' | 'public' | 'denied' | 'unauthenticated' | 'refused';
/** What went wrong calling an IdP: no answer (network, timeout), or an HTTP error status by class. */
export type IdpError = 'network' | 'timeout' | '4xx' | '5xx';

export interface Metrics {
  /** False for NO_METRICS: callers may skip work done only to record. */
  readonly enabled: boolean;
  /** A request answered: its area, app id ("" when it concerned none), status and time in seconds. */
  request(area: Area, app: string, status: number, seconds: number): void;
  /** An access decision: allowed, denied by which rule (`allow[0]`, `deny[1]`, `default`), and so on. */
  decision(area: Area, app: string, decision: Decision, rule: string): void;
  /** An upstream's answer began (its headers) this many seconds after it was asked. */
  upstream(app: string, seconds: number): void;
  /** An upstream could not be reached or failed mid-answer. */
  upstreamError(app: string): void;
  /** A sign-in ended: `success`, or the catalogue code it failed with. */
  signIn(provider: string, outcome: string): void;
  /** A proxied WebSocket opened (+1) or closed (-1). */
  webSocket(app: string, delta: 1 | -1): void;
  /** One call to an IdP took this long; `error` when it failed. */
  idpCall(provider: string, seconds: number, error: IdpError | undefined): void;
  /** The OpenID Provider answered: which step (`OidcStep`), for which client, and its outcome (`success` or the OAuth error code). */
  oidc(step: OidcStep, client: string, outcome: string): void;
}

/** The OpenID Provider's steps that are counted. */
export type OidcStep = 'authorization' | 'token' | 'userinfo' | 'introspection' | 'revocation' | 'par' | 'logout';

/** Metrics off: nothing recorded, nothing allocated. */
export const NO_METRICS: Metrics = {
  enabled: false,
  request() {},
  decision() {},
  upstream() {},
  upstreamError() {},
  signIn() {},
  webSocket() {},
  idpCall() {},
  oidc() {},
};

/** What is read at each scrape rather than recorded as it happens. */
export interface MetricSources {
  /** Sessions neither ended nor expired: one database count (the same on every worker). */
  activeSessions?: () => Promise<number>;
  /** The session cache: lookups so far, what it holds against its budget, and what it dropped, by why. */
  sessionCache?: () => SessionCacheStats;
  /** The database: its pool (PostgreSQL) and the errors its queries met. */
  database?: () => DatabaseStats;
}

/** A registry with Gatehouse's metrics, and the `Metrics` that records into it. */
export interface MetricsRegistry {
  metrics: Metrics;
  registry: Registry;
  /** Read these at every scrape (called once, by the composition root). */
  readFrom(sources: MetricSources): void;
}

const PREFIX = 'gatehouse_';
/** Request times: from a forward-auth check (tens of µs) to a slow upstream (seconds). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** IdP calls cross the network: from a few ms to the 10 s timeout. */
const IDP_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** A status as its class; anything outside 100-599 (never sent) as "other". */
function statusClass(status: number): number {
  const index = Math.floor(status / 100) - 1;
  return index >= 0 && index < 5 ? index : 5;
}

/** A child per label pair, looked up without building a key string per call. */
function twoLevel<T>(make: (a: string, b: string) => T): (a: string, b: string) => T {
  const byA = new Map<string, Map<string, T>>();
  return (a, b) => {
    let byB = byA.get(a);
    if (!byB) byA.set(a, (byB = new Map()));
    let child = byB.get(b);
    if (child === undefined) byB.set(b, (child = make(a, b)));
    return child;
  };
}

/**
 * Builds the registry. `cluster`: this process is a worker of several; its registry is the one the
 * primary's listener gathers (AggregatorRegistry), each metric summed across workers unless it says
 * otherwise (the active session count is the same database count on every worker: its maximum is it).
 */
export function createMetrics(options: { cluster?: boolean } = {}): MetricsRegistry {
  const registry = new Registry();
  const registers = [registry];
  if (options.cluster) {
    // In a worker: constructing an AggregatorRegistry installs the answer to the primary's requests
    // over IPC, and this registry is what it answers with.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  }
  collectDefaultMetrics({ register: registry, prefix: PREFIX });

  // What every proxied and forward-auth request records: series resolved once, plain numbers after (fastMetrics.ts).
  const requestCount = new FastCounter(
    `${PREFIX}http_requests_total`,
    'Requests answered, by area (portal, api, oidc, forward_auth, proxy), app (proxy, forward_auth, and the app of an OpenID Provider request’s client) and status class.',
    ['area', 'app', 'status'],
    registry,
  );
  const requestTime = new FastHistogram(`${PREFIX}http_request_duration_seconds`, 'Time from a request’s arrival to the end of its answer, by area and app.', ['area', 'app'], REQUEST_BUCKETS, registry);
  const decisions = new FastCounter(
    `${PREFIX}access_decisions_total`,
    'Access decisions by area, app, decision (allowed, public, denied, unauthenticated, refused) and the policy rule that decided.',
    ['area', 'app', 'decision', 'rule'],
    registry,
  );
  const upstreamTime = new FastHistogram(`${PREFIX}upstream_response_seconds`, 'Time from asking an app’s upstream to the start of its answer (headers), by app.', ['app'], REQUEST_BUCKETS, registry);
  const upstreamErrors = new FastCounter(`${PREFIX}upstream_errors_total`, 'Proxied requests whose upstream could not be reached or failed mid-answer, by app.', ['app'], registry);
  const signIns = new Counter({
    name: `${PREFIX}sign_ins_total`,
    help: 'Sign-ins that ended, by provider and outcome (success, or the error catalogue code).',
    labelNames: ['provider', 'outcome'] as const,
    registers,
  });
  const oidcAnswers = new Counter({
    name: `${PREFIX}oidc_requests_total`,
    help: 'Requests the OpenID Provider answered, by step, client and outcome (success, or the OAuth error code).',
    labelNames: ['step', 'client', 'outcome'] as const,
    registers,
  });
  const webSockets = new Gauge({
    name: `${PREFIX}websockets_open`,
    help: 'Proxied WebSockets open now, by app.',
    labelNames: ['app'] as const,
    registers,
  });
  const idpTime = new Histogram({
    name: `${PREFIX}idp_request_duration_seconds`,
    help: 'Calls to IdPs (discovery, token, userinfo, JWKS, …), by provider.',
    labelNames: ['provider'] as const,
    buckets: IDP_BUCKETS,
    registers,
  });
  const idpErrors = new Counter({
    name: `${PREFIX}idp_request_errors_total`,
    help: 'Calls to IdPs that failed, by provider and error (network, timeout, 4xx, 5xx).',
    labelNames: ['provider', 'error'] as const,
    registers,
  });

  // Each (area, app) resolves its series once: its status classes, its time, its decisions by rule.
  const requestSeries = twoLevel((area, app) => ({
    statuses: [...STATUS_CLASSES, 'other'].map((status) => requestCount.of(area, app, status)),
    time: requestTime.of(area, app),
    decisions: twoLevel((decision, rule) => decisions.of(area, app, decision, rule)),
  }));
  const upstreamSeries = new Map<string, HistogramSeries>();

  const metrics: Metrics = {
    enabled: true,
    request(area, app, status, seconds) {
      const series = requestSeries(area, app);
      series.statuses[statusClass(status)]!.value++;
      requestTime.observe(series.time, seconds);
    },
    decision(area, app, decision, rule) {
      requestSeries(area, app).decisions(decision, rule).value++;
    },
    upstream(app, seconds) {
      let series = upstreamSeries.get(app);
      if (!series) upstreamSeries.set(app, (series = upstreamTime.of(app)));
      upstreamTime.observe(series, seconds);
    },
    upstreamError(app) {
      upstreamErrors.of(app).value++;
    },
    signIn(provider, outcome) {
      signIns.labels(provider, outcome).inc();
    },
    oidc(step, client, outcome) {
      oidcAnswers.labels(step, client, outcome).inc();
    },
    webSocket(app, delta) {
      webSockets.labels(app).inc(delta);
    },
    idpCall(provider, seconds, error) {
      idpTime.labels(provider).observe(seconds);
      if (error) idpErrors.labels(provider, error).inc();
    },
  };

  return {
    metrics,
    registry,
    readFrom(sources) {
      const { activeSessions, sessionCache, database } = sources;
      /** A counter kept elsewhere: `read` gives each value of its one label the total so far, at each scrape. */
      const totalsReadAtScrape = (name: string, help: string, label: string, read: () => Record<string, number>) =>
        new Counter({
          name: `${PREFIX}${name}`,
          help,
          labelNames: [label],
          registers,
          collect() {
            const totals = read();
            this.reset();
            for (const [value, total] of Object.entries(totals)) this.labels(value).inc(total);
          },
        });
      if (activeSessions) {
        new Gauge({
          name: `${PREFIX}sessions_active`,
          help: 'Sessions neither ended nor expired (a database count, read at each scrape).',
          // Every worker reads the same count: it is reported once, not summed.
          aggregator: 'max',
          registers,
          async collect() {
            this.set(await activeSessions());
          },
        });
      }
      if (sessionCache) {
        totalsReadAtScrape('session_cache_lookups_total', 'Lookups of a session in the in-memory cache, by result (hit, miss).', 'result', () => {
          const { hits, misses } = sessionCache();
          return { hit: hits, miss: misses };
        });
        const sizes: Array<[string, string, (stats: SessionCacheStats) => number]> = [
          ['entries', 'Entries in the in-memory session cache now (one per credential: a portal cookie or an app-host token).', (stats) => stats.entries],
          ['bytes', 'Estimated memory of the session cache’s entries now, in bytes (what its budget is compared with).', (stats) => stats.bytes],
          ['max_bytes', 'The session cache’s memory budget in bytes (session.cache.maxMemory), per process.', (stats) => stats.maxBytes],
        ];
        for (const [name, help, read] of sizes) {
          new Gauge({
            name: `${PREFIX}session_cache_${name}`,
            help,
            registers,
            collect() {
              this.set(read(sessionCache()));
            },
          });
        }
        totalsReadAtScrape(
          'session_cache_evictions_total',
          'Entries dropped from the session cache, by reason (budget: to stay within session.cache.maxMemory; ttl: older than its 60 s; invalidation: the session was revoked or changed).',
          'reason',
          () => sessionCache().evictions,
        );
      }
      if (database) {
        new Gauge({
          name: `${PREFIX}database_connections`,
          help: 'PostgreSQL pool connections by state (idle, busy), and its maximum (max).',
          labelNames: ['state'] as const,
          registers,
          collect() {
            const { pool } = database();
            if (!pool) return;
            this.labels('idle').set(pool.idle);
            this.labels('busy').set(pool.total - pool.idle);
            this.labels('max').set(pool.max);
          },
        });
        new Gauge({
          name: `${PREFIX}database_waiting_queries`,
          help: 'Queries waiting for a PostgreSQL pool connection (0 on SQLite).',
          registers,
          collect() {
            this.set(database().pool?.waiting ?? 0);
          },
        });
        totalsReadAtScrape('database_errors_total', 'Database queries that failed, by kind (busy: SQLite’s database is locked; error: any other).', 'kind', () => {
          const { errors } = database();
          return { busy: errors.busy, error: errors.total - errors.busy };
        });
      }
    },
  };
}

/** In the primary of several workers: the workers' registries, gathered and aggregated at each scrape. */
export function clusterRegistry(): { metrics(): Promise<string>; contentType: string } {
  const aggregator = new AggregatorRegistry();
  return { metrics: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}

/** openid-client's custom fetch, as far as it is used here: a URL and a fetch RequestInit. */
export type IdpFetch = (url: string, options: RequestInit) => Promise<Response>;

/**
 * The one place IdP calls are measured: a fetch for openid-client (`client.customFetch`) that times
 * each call to its answer's headers and counts what failed. `provider` is a configured provider's id
 * (bounded), never the URL.
 */
export function idpFetch(metrics: Metrics, provider: string): IdpFetch {
  return async (url, options) => {
    const start = performance.now();
    try {
      const response = await fetch(url, options);
      metrics.idpCall(provider, (performance.now() - start) / 1000, response.status >= 500 ? '5xx' : response.status >= 400 ? '4xx' : undefined);
      return response;
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      metrics.idpCall(provider, (performance.now() - start) / 1000, timedOut ? 'timeout' : 'network');
      throw error;
    }
  };
}
