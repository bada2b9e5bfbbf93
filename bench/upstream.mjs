// The upstream app for the benchmark: the "direct" baseline and the reverse proxy's target.
// A bare node:http server answering every request with 200 "ok" (text/plain), and /page with a 10 kB
// HTML page (for the proxy's compression), and /whoami with the X-Gatehouse-Email header it was sent (to
// check, before any load, that a proxy in front of it passes the identity on). It listens on an
// ephemeral 127.0.0.1 port and prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';

// As Gatehouse does at start (packages/server/src/http/tickObjectShape.ts), so that no process in the
// comparison can start in V8's slow state for nextTick entries: the baselines are measured at their best.
keepTickObjectShape();

const body = Buffer.from('ok');
// A page like an app's: repeated markup with varying numbers, about 10 kB.
const page = Buffer.from(
  `<!doctype html><html lang="en"><head><title>Report</title></head><body><table>${Array.from({ length: 160 }, (_, row) => `<tr><td class="id">${row}</td><td>Region ${row % 7}</td><td>${(row * 7919) % 10007}</td></tr>`).join('\n')}</table></body></html>`,
);
const server = createServer((request, response) => {
  if (request.url === '/page') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length });
    return response.end(page);
  }
  if (request.url === '/whoami') {
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    return response.end(request.headers['x-gatehouse-email'] ?? '');
  }
  response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length });
  response.end(body);
});
// Longer than any pause between two measurements, so a pooled proxy connection is never closed under it.
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : ''}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
