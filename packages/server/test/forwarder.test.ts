import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityHeaders } from '../src/authorize/identityHeaders.js';
import { appSchema } from '@gatehouse/contract';
import { UpstreamForwarder } from '../src/proxy/forwarder.js';

/** The forwarder on its own: a real upstream, and a front server that forwards every request to it. */
let upstream: Server;
let front: Server;
let forwarder: UpstreamForwarder;
let frontUrl: string;

const listen = (server: Server) => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

beforeAll(async () => {
  upstream = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive, x-private', 'x-private': 'for this hop only', 'x-seen-path': request.url ?? '' });
    response.end('from upstream');
  });
  const upstreamUrl = await listen(upstream);
  const app = appSchema.parse({ id: 'a', name: 'A', publicUrl: 'http://a.localhost:4180', upstream: `${upstreamUrl}/base`, policy: { allow: [{ anyUser: true }] } });
  forwarder = new UpstreamForwarder({ accessToken: () => undefined }, pino({ enabled: false }));
  front = createServer((request, response) => {
    forwarder.forward(request, response, { app, appOrigin: 'http://a.localhost:4180', result: { kind: 'public', headers: identityHeaders(undefined) }, forwardedFor: '127.0.0.1', clientAddress: '127.0.0.1' });
  });
  frontUrl = await listen(front);
});

afterAll(async () => {
  front?.close();
  upstream?.close();
  await forwarder?.close();
});

describe('the upstream forwarder', () => {
  it('streams to the upstream under its base path, without hop-by-hop headers back', async () => {
    const answer = await fetch(`${frontUrl}/x?y=1`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('from upstream');
    expect(answer.headers.get('x-seen-path')).toBe('/base/x?y=1');
    expect(answer.headers.get('x-private')).toBeNull();
  });

  it('lets go of upstreams no app uses any more, and opens them again when needed', async () => {
    expect((await fetch(`${frontUrl}/`)).status).toBe(200);
    expect(forwarder.size).toBe(1);
    forwarder.retain(new Set());
    expect(forwarder.size).toBe(0);
    expect((await fetch(`${frontUrl}/again`)).status).toBe(200);
    expect(forwarder.size).toBe(1);
  });
});
