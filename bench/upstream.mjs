// The upstream app for the benchmark: the "direct" baseline and the reverse proxy's target.
// A bare node:http server answering every request with 200 "ok" (text/plain). It listens on an
// ephemeral 127.0.0.1 port and prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';

// As Gatehouse does at start (packages/server/src/http/tickObjectShape.ts), so that no process in the
// comparison can start in V8's slow state for nextTick entries: the baselines are measured at their best.
keepTickObjectShape();

const body = Buffer.from('ok');
const server = createServer((_request, response) => {
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
