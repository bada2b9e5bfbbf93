import { createServer, type Server } from 'node:http';
import type { AppId } from './model.js';

/** What an upstream received, as it arrived: the raw target and the headers with their spelling. */
export interface Arrival {
  app: AppId;
  method: string;
  url: string;
  rawHeaders: Array<[string, string]>;
  /** The harness's correlation header, when it survived. */
  fuzzId: string | undefined;
}

export interface RecordingUpstreams {
  url: Record<AppId, string>;
  /** Arrivals of one fuzz request (removed from the record). */
  take(id: string): Arrival[];
  /** Arrivals without a fuzz id (a smuggled request, say), removed from the record. */
  takeUntagged(): Arrival[];
  close(): Promise<void>;
}

/**
 * One real HTTP server per app, standing for the app behind Gatehouse: it records every request that
 * reaches it (that is what "allowed" means) and answers 200 with a small body. What path it serves is
 * judged by the oracle on the raw target it received, with every reading real apps make (resolve.ts).
 */
export async function startRecordingUpstreams(): Promise<RecordingUpstreams> {
  const tagged = new Map<string, Arrival[]>();
  let untagged: Arrival[] = [];
  const servers: Server[] = [];
  const url = {} as Record<AppId, string>;
  const record = (app: AppId, method: string, target: string, raw: string[]) => {
    const rawHeaders: Array<[string, string]> = [];
    for (let i = 0; i < raw.length; i += 2) rawHeaders.push([raw[i]!, raw[i + 1]!]);
    const ids = rawHeaders.filter(([name]) => name.toLowerCase() === 'x-fuzz-id').map(([, value]) => value);
    const arrival: Arrival = { app, method, url: target, rawHeaders, fuzzId: ids.length === 1 ? ids[0] : undefined };
    if (arrival.fuzzId === undefined) untagged.push(arrival);
    else tagged.set(arrival.fuzzId, [...(tagged.get(arrival.fuzzId) ?? []), arrival]);
  };
  for (const app of ['wiki', 'vault'] as const) {
    const server = createServer((request, response) => {
      record(app, request.method ?? '', request.url ?? '', request.rawHeaders);
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end(`${app} served ${request.url}`));
      request.on('error', () => response.destroy());
    });
    // An upgrade (no app here has WebSockets on): recorded, then refused.
    server.on('upgrade', (request, socket) => {
      record(app, request.method ?? '', request.url ?? '', request.rawHeaders);
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || !address) throw new Error('upstream did not listen');
    url[app] = `http://127.0.0.1:${address.port}`;
    servers.push(server);
  }
  return {
    url,
    take(id) {
      const arrivals = tagged.get(id) ?? [];
      tagged.delete(id);
      return arrivals;
    },
    takeUntagged() {
      const arrivals = untagged;
      untagged = [];
      return arrivals;
    },
    async close() {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
