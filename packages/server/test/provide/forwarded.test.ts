import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { asIssuerSees } from '../../src/provide/forwarded.js';

/** What oidc-provider is told of a request's origin (provide/forwarded.ts), on a real Fastify with the house's trustProxy list. */
describe('the request as the OpenID Provider sees it', () => {
  async function seen(trustProxy: string[] | false, remoteAddress: string, forwardedFor?: string) {
    const app = Fastify({ trustProxy });
    app.get('/oidc/token', async (request) => {
      asIssuerSees(request, 'https://gatehouse.example.com');
      const { headers } = request.raw;
      return { ip: request.ip, forwardedFor: headers['x-forwarded-for'], host: headers['x-forwarded-host'], proto: headers['x-forwarded-proto'], forwarded: headers.forwarded ?? null };
    });
    try {
      const answer = await app.inject({
        method: 'GET',
        url: '/oidc/token',
        remoteAddress,
        headers: { ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}), 'x-forwarded-host': 'evil.example', forwarded: 'for=203.0.113.66;host=evil.example' },
      });
      return answer.json<{ ip: string; forwardedFor: string; host: string; proto: string; forwarded: string | null }>();
    } finally {
      await app.close();
    }
  }

  // Regression: behind a trusted proxy, the client address handed on (and request.ip afterwards, which
  // the failed client authentication count and the audit log read) was the proxy's own.
  it('behind a trusted proxy: the client address the proxy reported, one value, before and after', async () => {
    // Threat: every client behind the proxy sharing the proxy's address, so that failed client
    // authentications were counted against the proxy's address, never the guessing client's.
    expect(await seen(['127.0.0.1/8'], '127.0.0.1', '203.0.113.9, 198.51.100.7')).toEqual({
      ip: '198.51.100.7',
      forwardedFor: '198.51.100.7',
      host: 'gatehouse.example.com',
      proto: 'https',
      forwarded: null,
    });
  });

  it('from anyone else: the peer, whatever it claims', async () => {
    // Threat: a client naming another address (X-Forwarded-For, Forwarded) to spread its failures over made-up ones.
    expect(await seen(false, '192.0.2.44', '198.51.100.7')).toMatchObject({ ip: '192.0.2.44', forwardedFor: '192.0.2.44', host: 'gatehouse.example.com', forwarded: null });
    expect(await seen(['127.0.0.1/8'], '192.0.2.44', '198.51.100.7')).toMatchObject({ ip: '192.0.2.44', forwardedFor: '192.0.2.44' });
  });
});
