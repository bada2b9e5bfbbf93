import { createServer, type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { FullReadiness } from './health.js';

/** Where the metrics text comes from: this process's registry, or the primary gathering its workers'. */
export interface MetricsSource {
  metrics(): Promise<string>;
  contentType: string;
}

export interface MetricsListener {
  /** The scrape URL, e.g. http://127.0.0.1:4189/metrics. */
  url: string;
  close(): Promise<void>;
}

export interface MetricsListenerOptions {
  /** Host names it answers to besides IP literals and `localhost` (`metrics.hosts`), lower case. */
  hosts?: readonly string[];
  /** The full readiness report for `GET /readyz` here (operations/health.ts; in a primary, a worker's). */
  readiness?: () => Promise<FullReadiness>;
}

export const METRICS_PATH = '/metrics';
export const READINESS_PATH = '/readyz';

const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };

/**
 * Whether a request's Host names this listener as an operator would: an IP literal (Prometheus scrapes
 * a target by its address), `localhost`, or a name listed in `metrics.hosts`, with any port. Threat:
 * DNS rebinding. A page in a browser on the same machine (or the same private network) whose own name
 * the attacker re-points at 127.0.0.1 reads the listener as same-origin, but its requests still say
 * that name in Host: those are refused. One Host line only (a second could be read by something in
 * front as another name).
 */
export function isMetricsHost(request: Pick<IncomingMessage, 'headers' | 'rawHeaders'>, hosts: ReadonlySet<string>): boolean {
  let lines = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) if (request.rawHeaders[index]!.toLowerCase() === 'host') lines++;
  const host = request.headers.host;
  if (lines !== 1 || !host) return false;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(host);
  if (bracketed) return isIP(bracketed[1]!) === 6;
  const plain = /^([^:]+)(?::\d{1,5})?$/.exec(host);
  if (!plain) return false;
  const name = plain[1]!.toLowerCase();
  return isIP(name) === 4 || name === 'localhost' || hosts.has(name);
}

/**
 * The metrics listener (`metrics.listen`): GET /metrics in Prometheus's text format, and GET /readyz with
 * every check of readiness (what the public port shows only to admins), on a port of its own and nothing
 * else there. It has no authentication, which is why it is never the public listener (config/schema.ts
 * refuses that), its host defaults to loopback, and it answers only requests that name it by an IP
 * address, `localhost` or a name in `metrics.hosts` (421 otherwise, without the metrics).
 */
export async function listenMetrics(source: MetricsSource, host: string, port: number, log: FastifyBaseLogger, options: MetricsListenerOptions = {}): Promise<MetricsListener> {
  const names = new Set((options.hosts ?? []).map((name) => name.toLowerCase()));
  const server = createServer((request, response) => {
    if (!isMetricsHost(request, names)) {
      // RFC 9110 §15.5.20: this server is not the one the name was meant for.
      response.writeHead(421, TEXT).end('Misdirected request: the metrics listener answers only to an IP address, localhost, or a name in metrics.hosts\n');
      return;
    }
    const path = request.url?.split('?')[0];
    if (path !== METRICS_PATH && (path !== READINESS_PATH || !options.readiness)) {
      response.writeHead(404, TEXT).end(`Not found: metrics are at ${METRICS_PATH}${options.readiness ? `, readiness at ${READINESS_PATH}` : ''}\n`);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { ...TEXT, allow: 'GET, HEAD' }).end('Method not allowed\n');
      return;
    }
    if (path === READINESS_PATH) {
      options.readiness!().then(
        (report) => {
          response.writeHead(report.status === 'ready' ? 200 : 503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
          response.end(request.method === 'HEAD' ? undefined : JSON.stringify(report));
        },
        (error: unknown) => {
          log.warn({ err: error }, 'readiness could not be checked');
          response.writeHead(503, TEXT).end('Readiness could not be checked; see the log\n');
        },
      );
      return;
    }
    source.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': source.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        // A worker that did not answer in time, say: the scrape fails plainly, and the log says why.
        log.warn({ err: error }, 'metrics could not be gathered');
        response.writeHead(503, TEXT).end('Metrics could not be gathered; see the log\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as { address: string; port: number; family: string };
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}${METRICS_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
