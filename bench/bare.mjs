// The forward-auth baselines: a bare Fastify 5 handler, no plugins, no logging. `GET /` answers an empty
// 200 with a couple of headers. Given a JSON object of headers as its argument, `GET /identity` answers
// an empty 200 with exactly those headers: the very answer Gatehouse's forward-auth gives (identity
// headers and signed assertion, captured once), without the check. A second argument, a JSON object of
// paths and header objects, adds a route per path answering the same way: the checks nginx's
// auth_request and Caddy's forward_auth send (lib/frontProxies.ts), each with the answer Gatehouse gives
// that proxy's app. It listens on 127.0.0.1, on the port in BARE_PORT (a proxy configured before it
// starts names it) or an ephemeral one, and prints `listening <port>` once ready.
import Fastify from 'fastify';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';

// As Gatehouse does at start (packages/server/src/http/tickObjectShape.ts), so that no process in the
// comparison can start in V8's slow state for nextTick entries: the baselines are measured at their best.
keepTickObjectShape();

const identity = process.argv[2] ? JSON.parse(process.argv[2]) : undefined;
const app = Fastify({ logger: false });
const handler = async (_request, reply) => reply.status(200).headers({ 'cache-control': 'no-store', 'x-bench-user': 'bare' }).send();
if (identity) app.get('/identity', async (_request, reply) => reply.status(200).headers(identity).send());
for (const [route, headers] of Object.entries(process.argv[3] ? JSON.parse(process.argv[3]) : {})) {
  app.get(route, async (_request, reply) => reply.status(200).headers(headers).send());
}
app.get('/', handler);
app.get('/*', handler);

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.BARE_PORT || 0) });
console.log(`listening ${new URL(address).port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
