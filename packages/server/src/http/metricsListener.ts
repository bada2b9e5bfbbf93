import { createServer } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';

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

export const METRICS_PATH = '/metrics';

/**
 * The metrics listener (`metrics.listen`): GET /metrics in Prometheus's text format, on a port of its
 * own and nothing else there. It has no authentication, which is why it is never the public listener
 * (config/schema.ts refuses that) and its host defaults to loopback.
 */
export async function listenMetrics(source: MetricsSource, host: string, port: number, log: FastifyBaseLogger): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (path !== METRICS_PATH) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`Not found: metrics are at ${METRICS_PATH}\n`);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
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
        response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics could not be gathered; see the log\n');
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
