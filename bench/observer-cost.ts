/**
 * What metrics and the access log add to one forward-auth request and to one proxied request, measured
 * in this process alone: the very calls the hot path makes (proxy/hotPath.ts: begin, the decision, then
 * for forward-auth finish at once, for the proxy follow until the response closes; proxy/forwarder.ts:
 * the exchange looked up and the upstream's time) on the built server's own code, with the rest of the
 * request left out. The whole-node comparison (`npm run bench`,
 * "operations") includes everything but cannot resolve a few per cent on a shared machine; this reads
 * the added work itself, in nanoseconds.
 *
 *   npm run build && node --import tsx bench/observer-cost.ts
 */
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createAccessLog } from '../packages/server/dist/operations/accessLog.js';
import { createMetrics, NO_METRICS, type Metrics } from '../packages/server/dist/operations/metrics.js';
import { requestObserver, type RequestObserver } from '../packages/server/dist/operations/observe.js';
import { median } from './lib/stats.js';

const execFileAsync = promisify(execFile);

const REQUESTS = 400_000;
/** Requests between yields to the event loop, so the access log's writes happen as they would. */
const BATCH = 250;
const ROUNDS = 7;

const request = { method: 'GET', url: '/.gatehouse/auth/wiki', headers: { host: 'gatehouse.internal' } } as unknown as IncomingMessage;
const response = { headersSent: true, statusCode: 200 } as unknown as ServerResponse;
const user = { id: '0b5c2a4e-7d1f-4c55-9a0e-2f3d4c5b6a79', email: 'alice@example.com' };

type Route = 'forward-auth' | 'proxy';
const ROUTES: Route[] = ['forward-auth', 'proxy'];

/** Runs REQUESTS requests' worth of `observer`'s work as the hot path calls it (none: the loop alone). */
async function perRequest(observer: RequestObserver | undefined, metrics: Metrics, route: Route): Promise<void> {
  for (let done = 0; done < REQUESTS; done += BATCH) {
    for (let index = 0; index < BATCH; index++) {
      if (route === 'forward-auth') {
        const exchange = observer?.begin();
        if (exchange && observer) {
          exchange.area = 'forward_auth';
          exchange.app = 'wiki';
          exchange.original = { method: 'GET', host: 'wiki.example.com', target: `/pages/${index}` };
          observer.decided(exchange, 'allowed', 'allow[0]', { id: user.id, email: user.email });
          observer.finish(request, response, exchange);
        }
        continue;
      }
      // A proxied request's own request and response (the response an emitter, as node:http's): made
      // with or without the observer, so that only the observer's work differs.
      const proxied = { method: 'GET', url: `/pages/${index}`, headers: { host: 'wiki.example.com' } } as unknown as IncomingMessage;
      const answer = Object.assign(new EventEmitter(), { headersSent: true, statusCode: 200 }) as unknown as ServerResponse;
      const exchange = observer?.begin();
      if (exchange && observer) {
        exchange.area = 'proxy';
        exchange.app = 'wiki';
        observer.decided(exchange, 'allowed', 'allow[0]', { id: user.id, email: user.email });
        observer.follow(proxied, answer, exchange);
        const found = observer.of(proxied);
        const asked = performance.now();
        const upstreamMs = performance.now() - asked;
        if (found) found.upstreamMs = upstreamMs;
        metrics.upstream('wiki', upstreamMs / 1000);
      }
      answer.emit('close');
    }
    await new Promise(setImmediate);
  }
}

type Variant = 'metrics' | 'access log' | 'both';
const VARIANTS: Variant[] = ['metrics', 'access log', 'both'];

/**
 * One variant in a process of its own (one observer per process, as a node has: its calls stay
 * monomorphic, as they are in production): CPU time per request with the observer, minus the loop alone.
 */
async function child(variant: Variant, route: Route): Promise<void> {
  const folder = mkdtempSync(path.join(tmpdir(), 'gatehouse-observer-cost-'));
  try {
    const metrics = variant === 'access log' ? NO_METRICS : createMetrics().metrics;
    const accessLog = variant === 'metrics' ? undefined : createAccessLog({ mode: 'production', accessLog: { destination: path.join(folder, 'access.log'), query: false, email: false } });
    const observer = requestObserver(metrics, accessLog);
    const cpu = async (subject: RequestObserver | undefined) => {
      const before = process.cpuUsage();
      await perRequest(subject, subject ? metrics : NO_METRICS, route);
      const used = process.cpuUsage(before);
      return ((used.user + used.system) * 1000) / REQUESTS;
    };
    await cpu(undefined);
    await cpu(observer);
    const alone = await cpu(undefined);
    const withObserver = await cpu(observer);
    await accessLog?.close();
    console.log(JSON.stringify({ variant, route, ns: withObserver - alone, loop: alone }));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const samples = new Map<string, number[]>();
  // Rounds in turn, so the machine's drifts fall on every variant alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const route of ROUTES) {
      for (const variant of VARIANTS) {
        const { stdout } = await execFileAsync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), variant, route], { encoding: 'utf8' });
        const key = `${route}/${variant}`;
        samples.set(key, [...(samples.get(key) ?? []), (JSON.parse(stdout.trim().split('\n').at(-1)!) as { ns: number }).ns]);
      }
    }
  }
  for (const route of ROUTES) {
    console.log(`CPU time added per ${route} request by the hot path's calls (median of ${ROUNDS} processes each, ${REQUESTS.toLocaleString('en')} requests):`);
    for (const variant of VARIANTS) console.log(`  ${variant.padEnd(11)} ${median(samples.get(`${route}/${variant}`)!).toFixed(0).padStart(6)} ns`);
  }
}

const [askedVariant, askedRoute] = process.argv.slice(2) as [Variant | undefined, Route | undefined];
await (askedVariant ? child(askedVariant, askedRoute ?? 'forward-auth') : main());
