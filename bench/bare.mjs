// The forward-auth baseline: a bare Fastify 5 handler, no plugins, no logging, answering GET with an
// empty 200 and a couple of headers (as the forward-auth answer is an empty 200 with headers). It
// listens on an ephemeral 127.0.0.1 port and prints `listening <port>` once ready.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const handler = async (_request, reply) => reply.status(200).headers({ 'cache-control': 'no-store', 'x-bench-user': 'bare' }).send();
app.get('/', handler);
app.get('/*', handler);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening ${new URL(address).port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
