import { request as httpRequest } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { listenMetrics, type MetricsListener } from '../../src/operations/metricsListener.js';
import type { FullReadiness } from '../../src/operations/health.js';

/**
 * Threat: DNS rebinding. The metrics listener has no authentication and sits on loopback (or a private
 * address). A page in a browser on the same machine re-points its own name (evil.example) at 127.0.0.1
 * once loaded, and then reads http://evil.example:9464/metrics and /readyz as same-origin: the metrics
 * and every check of readiness reach the attacker. The browser still says evil.example in Host; the
 * listener answers only an IP address, `localhost`, or a name the operator listed (`metrics.hosts`),
 * and everything else gets 421 without the metrics.
 */
describe('the metrics listener answers only to its own names', () => {
  let listener: MetricsListener;
  let port: number;
  const report: FullReadiness = {
    status: 'ready',
    checks: { database: 'ok', changes: 'local', providers: [], config: { file: '/etc/gatehouse/gatehouse.yaml', loadedAt: new Date(0).toISOString(), lastReload: null } },
  };

  beforeAll(async () => {
    const { metrics } = parseConfig({ metrics: { listen: { port: 0 }, hosts: ['Gatehouse-0.Metrics.Internal'] } }, { env: {} });
    listener = await listenMetrics({ metrics: async () => 'gatehouse_up 1\n', contentType: 'text/plain; version=0.0.4' }, '127.0.0.1', 0, pino({ enabled: false }), {
      hosts: metrics!.hosts,
      readiness: async () => report,
    });
    port = Number(new URL(listener.url).port);
  });
  afterAll(() => listener?.close());

  /** A GET with exactly these header lines (Host among them, as many times as given). */
  function get(path: string, hostLines: string[]): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const headers: string[] = hostLines.flatMap((host) => ['Host', host]);
      const request = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', setHost: false, headers: [...headers, 'Connection', 'close'] as unknown as Record<string, string> }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.end();
    });
  }

  it('refuses any other name, with or without a port, at every path: 421 and no metrics', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, 'localhost.evil.example', 'metrics.internal', '127.0.0.1.nip.io', 'gatehouse-0.metrics.internal.evil.example', 'x:y:z', '[not-an-ip]']) {
      for (const path of ['/metrics', '/readyz', '/other']) {
        const answer = await get(path, [host]);
        expect(answer.status, `${host} ${path}`).toBe(421);
        expect(answer.body).not.toMatch(/gatehouse_up|gatehouse\.yaml/);
      }
    }
    // A second Host line, whichever comes first: something in front may read the other one.
    expect((await get('/metrics', ['127.0.0.1', 'evil.example'])).status).toBe(421);
    expect((await get('/metrics', ['evil.example', '127.0.0.1'])).status).toBe(421);
  });

  it('answers an IP address, localhost, or a listed name in any case', async () => {
    for (const host of ['127.0.0.1', `127.0.0.1:${port}`, '10.0.0.7:9464', `[::1]:${port}`, '[::1]', 'localhost', `LOCALHOST:${port}`, 'gatehouse-0.metrics.internal', `GATEHOUSE-0.metrics.internal:${port}`]) {
      const metrics = await get('/metrics', [host]);
      expect(metrics, host).toEqual({ status: 200, body: 'gatehouse_up 1\n' });
    }
    const readiness = await get('/readyz', [`localhost:${port}`]);
    expect(readiness.status).toBe(200);
    expect(JSON.parse(readiness.body)).toEqual(report);
  });

  it('refuses a metrics.hosts entry that is not a host name', () => {
    for (const hosts of [['http://metrics.internal'], ['metrics.internal:9464'], ['*.internal'], ['']]) {
      expect(() => parseConfig({ metrics: { listen: { port: 9464 }, hosts } }, { env: {} }), JSON.stringify(hosts)).toThrow(/metrics\.hosts\[0\]: must be a host name/);
    }
  });
});
