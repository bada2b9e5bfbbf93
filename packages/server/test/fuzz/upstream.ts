import { createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { ANSWER_SHAPES, type AnswerShape, type AppId } from './model.js';

/** What an upstream received, as it arrived: the raw target and the headers with their spelling. */
export interface Arrival {
  app: AppId;
  method: string;
  url: string;
  rawHeaders: Array<[string, string]>;
  /** The harness's correlation header, when it survived. */
  fuzzId: string | undefined;
  /** The Content-Encoding the app itself answered with, if any (what Gatehouse did not add). */
  answeredEncoding: string | undefined;
}

/** The answer of the shape a request asked for (`X-Fuzz-Answer`): headers and body, the target reflected in pages. */
function answerFor(app: AppId, target: string, shape: AnswerShape): { headers: OutgoingHttpHeaders; body: Buffer; chunked: boolean } {
  const served = `${app} served ${target}`;
  // Long enough to be worth compressing (1 KB or more), and reflecting what the request asked for.
  const page = `<!doctype html><p>${served.replace(/[<&]/g, '.')}</p>${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(60)}`;
  switch (shape) {
    case 'small':
      return { headers: { 'content-type': 'text/plain' }, body: Buffer.from(served), chunked: false };
    case 'page':
      return { headers: { 'content-type': 'text/html; charset=utf-8' }, body: Buffer.from(page), chunked: false };
    case 'json':
      return { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ served, rows: Array.from({ length: 80 }, (_, n) => ({ n, text: 'row' })) })), chunked: false };
    case 'stream':
      return { headers: { 'content-type': 'text/html; charset=utf-8' }, body: Buffer.from(page), chunked: true };
    case 'encoded':
      return { headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' }, body: gzipSync(page), chunked: false };
  }
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
 * reaches it (that is what "allowed" means) and answers 200. What path it serves is
 * judged by the oracle on the raw target it received, with every reading real apps make (resolve.ts).
 * The answer's shape is the request's choice (`X-Fuzz-Answer`, model.ts), so some are worth compressing.
 */
export async function startRecordingUpstreams(): Promise<RecordingUpstreams> {
  const tagged = new Map<string, Arrival[]>();
  let untagged: Arrival[] = [];
  const servers: Server[] = [];
  const url = {} as Record<AppId, string>;
  const record = (app: AppId, method: string, target: string, raw: string[], answeredEncoding?: string) => {
    const rawHeaders: Array<[string, string]> = [];
    for (let i = 0; i < raw.length; i += 2) rawHeaders.push([raw[i]!, raw[i + 1]!]);
    const ids = rawHeaders.filter(([name]) => name.toLowerCase() === 'x-fuzz-id').map(([, value]) => value);
    const arrival: Arrival = { app, method, url: target, rawHeaders, fuzzId: ids.length === 1 ? ids[0] : undefined, answeredEncoding };
    if (arrival.fuzzId === undefined) untagged.push(arrival);
    else tagged.set(arrival.fuzzId, [...(tagged.get(arrival.fuzzId) ?? []), arrival]);
  };
  for (const app of ['wiki', 'vault'] as const) {
    const server = createServer((request, response) => {
      const asked = request.headers['x-fuzz-answer'];
      const shape = ANSWER_SHAPES.find((candidate) => candidate === asked) ?? 'small';
      const { headers, body, chunked } = answerFor(app, request.url ?? '', shape);
      record(app, request.method ?? '', request.url ?? '', request.rawHeaders, headers['content-encoding'] as string | undefined);
      request.resume();
      request.on('end', () => {
        if (!chunked) return response.writeHead(200, { ...headers, 'content-length': body.length }).end(body);
        // Of unknown length: written in two parts, without a Content-Length.
        response.writeHead(200, headers);
        response.write(body.subarray(0, 512));
        response.end(body.subarray(512));
      });
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
