import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import { endpoints, idSchema, pages } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { typed } from '../http/contract.js';
import { rateLimitKey } from '../http/trustedProxies.js';
import { cookieOptions } from '../sessions/cookies.js';
import { backchannelLogout } from './backchannelLogout.js';
import { callback } from './callback.js';
import { linkStart } from './linkStart.js';
import { signInStart, switchAccount } from './signInStart.js';
import { signOut } from './signOut.js';
import { testSignInStart } from './testSignIn.js';
import type { AuthenticateDeps } from './deps.js';

export type { AuthenticateDeps };

const providerParams = z.object({ providerId: idSchema });

/** The only routes that talk to IdPs: sign-in start, callback, linking, test sign-in and sign-out, under /.gatehouse/. */
export async function authenticateArea(instance: FastifyInstance, deps: AuthenticateDeps) {
  const app = typed(instance);

  await app.register(formbody, { bodyLimit: 4096 });

  // Sign-in start and callback share one budget per client address (PRODUCT.md: 30 a minute), so the
  // limit holds whichever of the two endpoints is hammered. With `cache.url` the budget is counted in
  // Redis, across every node; without it, each node counts on its own — in its primary process when it
  // runs several workers (limits/clusterLimits.ts), so the budget is the node's, not each worker's. When
  // Redis or the primary fails, each process's own count decides (limits/limitFallback.ts): never off.
  const counted = deps.sharedLimits ?? deps.nodeLimits;
  await app.register(async (signIn) => {
    await signIn.register(rateLimit, {
      global: true,
      ...(counted ? { store: counted.store('sign-in') } : {}),
      // Read at each request: a config reload may change the budget.
      max: () => deps.running.current.signIn.rateLimit.max,
      timeWindow: () => deps.running.current.signIn.rateLimit.window,
      // The client address normalised (http/trustedProxies.ts), not request.ip's raw text: a proxy that
      // writes ports into X-Forwarded-For, or a client's other spellings of one address, or another
      // address of its IPv6 /64, must not get a fresh budget each time.
      keyGenerator: (request) => rateLimitKey(request.ip),
      errorResponseBuilder: (_request, context) =>
        new AppError('rate_limited', { headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) } }),
    });
    const limited = typed(signIn);
    limited.get(endpoints.signIn, {
      schema: { params: providerParams, querystring: z.object({ rd: z.string().max(2048).optional() }) },
      handler: signInStart(deps),
    });
    limited.get(endpoints.callback, { schema: { params: providerParams }, handler: callback(deps) });
  });

  // Forms people post (CSRF in the `csrf_token` field); signed out, they are sent somewhere useful
  // rather than answered with a 401.
  app.post(endpoints.signOut, {
    // "Sign out everywhere" posts everywhere=true; the form's other field is its csrf_token.
    schema: { body: z.object({ everywhere: z.string().optional() }).optional() },
    config: { access: 'session', csrf: 'form', whenSignedOut: clearSessionCookie(deps) },
    handler: signOut(deps),
  });
  app.post(endpoints.link, {
    schema: { params: providerParams },
    config: { access: 'session', csrf: 'form', whenSignedOut: toSignIn(() => pages.account.path) },
    handler: linkStart(deps),
  });
  app.post(endpoints.testSignIn, {
    schema: { params: providerParams },
    config: {
      access: 'admin',
      csrf: 'form',
      // Before validation (the guard runs first): the raw parameter, encoded into the return path.
      whenSignedOut: toSignIn((request) => pages.adminProvider.href((request.params as { providerId: string }).providerId)),
    },
    handler: testSignInStart(deps),
  });
  app.get(endpoints.switchAccount, {
    schema: { querystring: z.object({ rd: z.string().max(2048).optional() }) },
    handler: switchAccount(deps),
  });
  // The IdP calls this; the signed logout token is the authentication (no session, no CSRF).
  app.post(endpoints.backchannelLogout, { schema: { params: providerParams }, handler: backchannelLogout(deps) });
  app.get(endpoints.signOut, async () => {
    // Signing out changes state: only by POST with CSRF protection, never by a link or an <img>.
    throw new AppError('method_not_allowed', { headers: { allow: 'POST' } });
  });
}

/** Signed out already: whatever session cookie is left goes, and the browser lands on /signed-out. */
function clearSessionCookie(deps: Pick<AuthenticateDeps, 'cookies' | 'secureCookies'>) {
  return (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('cache-control', 'no-store').clearCookie(deps.cookies.session, cookieOptions(deps.secureCookies)).redirect(pages.signedOut.path, 303);
}

/** Signed out: sign in first, then come back to the page the form was on. */
function toSignIn(page: (request: FastifyRequest) => string) {
  return (request: FastifyRequest, reply: FastifyReply) => reply.redirect(`${pages.signIn.path}?rd=${encodeURIComponent(page(request))}`, 303);
}
