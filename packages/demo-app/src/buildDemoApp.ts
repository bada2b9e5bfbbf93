import Fastify, { type FastifyInstance } from 'fastify';

import { signInWithGatehouse, type SignInWithGatehouseOptions } from './rp/signInWithGatehouse.js';
import { createAssertionVerifier } from './verifyAssertion.js';
import { whoami, type AssertionCheck } from './whoami.js';
import { whoamiPage } from './whoamiPage.js';

export interface DemoAppOptions {
  /** Gatehouse's JWKS URL; together with `issuer` it turns on assertion verification. */
  jwksUrl?: string;
  /** Gatehouse's issuer identifier. */
  issuer?: string;
  /**
   * The app's public origin, the expected `aud`. Default: the request's own origin, as Gatehouse
   * forwards it (see AssertionCheck).
   */
  audience?: string;
  /**
   * "Sign in with Gatehouse": the demo as an OpenID Connect client of Gatehouse, on its own host
   * (`publicUrl`). Other hosts (those Gatehouse guards) keep the whoami page on every path.
   */
  oidc?: SignInWithGatehouseOptions;
}

// The page shows request headers: no scripts, no framing, never cached (it differs per user).
const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/** The "whoami" app: every request, any method and path, answered with what the app was told about it. */
export function buildDemoApp(opts: DemoAppOptions = {}): FastifyInstance {
  const { jwksUrl, issuer, audience, oidc } = opts;
  if ((jwksUrl === undefined) !== (issuer === undefined)) {
    throw new Error('demo-app: set both the JWKS URL and the issuer to verify assertions, or neither');
  }
  const check: AssertionCheck | undefined =
    jwksUrl && issuer ? { verify: createAssertionVerifier({ jwksUrl, issuer }), audience } : undefined;

  // Gatehouse tells the app its public origin in X-Forwarded-Host and -Proto (dropping any a client
  // sent), so an app behind it checks the audience it was addressed by, with or without "Preserve
  // Host". Believed only from loopback, where Gatehouse runs next to the demo.
  const app = Fastify({ trustProxy: 'loopback' });
  // Request bodies are never shown: accept any content type and leave the body unread.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  // Encapsulated: its cookie and form parsers stay out of the whoami routes, which never read a body.
  if (oidc) app.register((rp) => signInWithGatehouse(rp, oidc));

  app.all<{ Querystring: { format?: string } }>('/*', async (request, reply) => {
    const report = await whoami(request, check);
    const format = request.query.format;
    const wantsJson = format === 'json' || (format !== 'html' && (request.headers.accept ?? '').includes('application/json'));
    reply.header('vary', 'Accept').header('cache-control', 'no-store');
    if (wantsJson) return reply.send(report);
    return reply.headers(HTML_HEADERS).send(whoamiPage(report));
  });
  return app;
}
