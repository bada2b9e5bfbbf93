// Optional reference (BENCH_PLAIN_PROXY=1): the reverse proxy Gatehouse is built on, without Gatehouse.
// Fastify 5 + @fastify/reply-from (undici) with Gatehouse's pool settings, no logging, no checks: what
// @fastify/http-proxy does. Takes the upstream URL as its argument; listens on an ephemeral 127.0.0.1
// port and prints `listening <port>` once ready.
import replyFrom from '@fastify/reply-from';
import Fastify from 'fastify';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: plain-proxy.mjs <upstream URL>');
const app = Fastify({ logger: false });
await app.register(replyFrom, { base: upstream, undici: { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 } });
app.all('/*', (request, reply) => reply.from(request.url));

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening ${new URL(address).port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
