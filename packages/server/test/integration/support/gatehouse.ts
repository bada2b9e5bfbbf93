import type { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import type { ConfigInput } from '../../../src/config/schema.js';
import { readinessReport } from '../../../src/operations/health.js';
import { listenMetrics, READINESS_PATH, type MetricsListener } from '../../../src/operations/metricsListener.js';
import { createServices, type Services } from '../../../src/services.js';
import { freePort } from '../../support/ports.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './testStore.js';

export interface RunningGatehouse {
  url: string;
  port: number;
  app: FastifyInstance;
  services: Services;
  /**
   * With `metrics:` configured, its metrics listener, started as cli/start.ts starts it: the scrape URL and
   * the operator's readiness report (`GET /readyz` there, every check).
   */
  metricsUrl: string | undefined;
  readinessUrl: string | undefined;
  /** Where it keeps its data: give it to another startGatehouse to start on the same data. */
  store: TestStore;
  /** Stops it, and removes its store unless the store was handed in. */
  close(): Promise<void>;
}

export interface StartOptions extends Partial<Omit<ConfigInput, 'dataDir' | 'database'>> {
  port?: number;
  /**
   * The store of an earlier Gatehouse (its `store`), to start on the same data — a restart; it stays
   * that Gatehouse's to remove. Without it, a new empty store on this run's database (testStore.ts).
   */
  store?: TestStore;
  /** Where its log lines go (JSON, one a line, level info and up); silent without it. */
  logStream?: Writable;
  /** The built front end it serves (packages/web/dist unless given). */
  webRoot?: string;
}

/**
 * The real server, listening on loopback with a store of its own (SQLite or PostgreSQL, as the test
 * project says), configured like an operator would.
 */
export async function startGatehouse(overrides: StartOptions = {}): Promise<RunningGatehouse> {
  const { port: wanted, store: given, logStream, webRoot, ...input } = overrides;
  const port = wanted ?? (await freePort());
  const store = given ?? (await createTestStore());
  const owned = given === undefined;
  try {
    const config = parseConfig(
      {
        publicUrl: `http://localhost:${port}`,
        listen: { host: '127.0.0.1', port },
        // The level the test's logger has, so that a reload in a test (which applies log.level) keeps it.
        log: { level: logStream ? 'info' : ((process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'silent') },
        // Suites sign in dozens of times a minute from one address; the rate-limit suite sets its own.
        signIn: { rateLimit: { max: 10_000 } },
        ...input,
        ...storeConfig(store),
      },
      { env: {} },
    );
    const log = logStream ? pino({ level: 'info' }, logStream) : pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    const services = await createServices(config, log);
    let app: FastifyInstance;
    let metrics: MetricsListener | undefined;
    try {
      app = await buildApp(services, { loggerInstance: log, ...(webRoot ? { webRoot } : {}) });
      await app.listen({ host: '127.0.0.1', port });
      if (config.metrics && services.metricsRegistry) {
        const { host, port: metricsPort } = config.metrics.listen;
        metrics = await listenMetrics(services.metricsRegistry.registry, host, metricsPort, log, { hosts: config.metrics.hosts, readiness: () => readinessReport(services) });
      }
    } catch (error) {
      await services.close();
      throw error;
    }
    services.providers.start();
    return {
      url: `http://localhost:${port}`,
      port,
      app,
      services,
      store,
      metricsUrl: metrics?.url,
      readinessUrl: metrics ? new URL(READINESS_PATH, metrics.url).href : undefined,
      async close() {
        await metrics?.close();
        await app.close();
        await services.close();
        if (owned) await removeTestStore(store);
      },
    };
  } catch (error) {
    if (owned) await removeTestStore(store);
    throw error;
  }
}
