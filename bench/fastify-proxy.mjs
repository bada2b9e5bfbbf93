// Reference (on unless BENCH_FASTIFY_PROXY=0): "a plain @fastify/http-proxy", the second
// yardstick for the proxy: Fastify 5 with `logger: false` and the official @fastify/http-proxy plugin
// (@fastify/reply-from on undici) registered with its defaults, forwarding every path to the upstream;
// no checks. Takes the upstream URL as its argument; listens on an ephemeral 127.0.0.1 port and prints
// `listening <port>` once ready.
import Fastify from 'fastify';
import httpProxy from '@fastify/http-proxy';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';

// As Gatehouse does at start (packages/server/src/http/tickObjectShape.ts): see plain-proxy.mjs.
keepTickObjectShape();

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: fastify-proxy.mjs <upstream URL>');
const app = Fastify({ logger: false });
await app.register(httpProxy, { upstream });
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening ${new URL(address).port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => void app.close().then(() => process.exit(0)));
}
