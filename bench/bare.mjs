// The forward-auth baselines: a bare Fastify 5 handler, no plugins, no logging. `GET /` answers an empty
// 200 with a couple of headers. Given a JSON object of headers as its argument, `GET /identity` answers
// an empty 200 with exactly those headers: the very answer Gatehouse's forward-auth gives (identity
// headers and signed assertion, captured once), without the check. It listens on an ephemeral 127.0.0.1
// port and prints `listening <port>` once ready.
import Fastify from 'fastify';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';

// As Gatehouse does at start (packages/server/src/http/tickObjectShape.ts), so that no process in the
// comparison can start in V8's slow state for nextTick entries: the baselines are measured at their best.
keepTickObjectShape();

const identity = process.argv[2] ? JSON.parse(process.argv[2]) : undefined;
const app = Fastify({ logger: false });
const handler = async (_request, reply) => reply.status(200).headers({ 'cache-control': 'no-store', 'x-bench-user': 'bare' }).send();
if (identity) app.get('/identity', async (_request, reply) => reply.status(200).headers(identity).send());
app.get('/', handler);
app.get('/*', handler);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening ${new URL(address).port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
