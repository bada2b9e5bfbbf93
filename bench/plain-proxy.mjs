// Reference (on unless BENCH_PLAIN_PROXY=0): the reverse proxy Gatehouse's hot path is built on, without
// Gatehouse: node:http and an undici Pool with Gatehouse's pool settings, streaming each request to the
// upstream and the answer back (hop-by-hop headers dropped), no logging, no checks. Takes the upstream
// URL as its argument; listens on an ephemeral 127.0.0.1 port and prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';

// As Gatehouse does at start (packages/server/src/http/tickObjectShape.ts), so that no process in the
// comparison can start in V8's slow state for nextTick entries: the baselines are measured at their best.
keepTickObjectShape();

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: plain-proxy.mjs <upstream URL> [headers to add, as JSON]');
// With a second argument, the headers Gatehouse adds to every request it forwards (forwarding and
// identity, the assertion among them), added to each request here too: the floor of a proxy that must
// carry them, which undici validates and writes as it does Gatehouse's (bench/README.md).
const added = process.argv[3] ? JSON.parse(process.argv[3]) : undefined;
const pool = new Pool(upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'host']);
const withoutHopByHop = (incoming, extra) => {
  const headers = {};
  for (const name in incoming) if (!hopByHop.has(name)) headers[name] = incoming[name];
  if (extra) Object.assign(headers, extra);
  return headers;
};

const server = createServer((request, response) => {
  const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  pool.stream(
    { method: request.method, path: request.url, headers: withoutHopByHop(request.headers, added), body: hasBody ? request : null },
    ({ statusCode, headers }) => {
      response.writeHead(statusCode, withoutHopByHop(headers));
      return response;
    },
    (error) => {
      if (error && !response.headersSent) response.writeHead(502).end();
    },
  );
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close();
    void pool.close().then(() => process.exit(0));
  });
}
