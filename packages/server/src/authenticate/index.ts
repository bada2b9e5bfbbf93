import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { rateLimitKey } from '../http/trustedProxies.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { backchannelLogout } from './backchannelLogout.js';
import { callback } from './callback.js';
import { linkStart } from './linkStart.js';
import { signInStart } from './signInStart.js';
import { signOut } from './signOut.js';
import { testSignInStart } from './testSignIn.js';

/** The only routes that talk to IdPs: sign-in start, callback, linking, test sign-in and sign-out, under /.gatehouse/. */
export async function authenticateRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { rateLimit: limit } = services.config.signIn;
  const providerParams = {
    type: 'object',
    properties: { providerId: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' } },
    required: ['providerId'],
  } as const;

  await app.register(formbody, { bodyLimit: 4096 });

  // Sign-in start and callback share one budget per client address (PRODUCT.md: 30 a minute), so the
  // limit holds whichever of the two endpoints is hammered.
  await app.register(async (signIn) => {
    await signIn.register(rateLimit, {
      global: true,
      max: limit.max,
      timeWindow: limit.window,
      // The client address normalised (http/trustedProxies.ts), not request.ip's raw text: a proxy that
      // writes ports into X-Forwarded-For, or a client's other spellings of one address, or another
      // address of its IPv6 /64, must not get a fresh budget each time.
      keyGenerator: (request) => rateLimitKey(request.ip),
      errorResponseBuilder: (_request, context) =>
        new AppError('rate_limited', { headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) } }),
    });
    signIn.get(paths.signInStartRoute, {
      schema: { params: providerParams, querystring: { type: 'object', properties: { rd: { type: 'string', maxLength: 2048 } } } },
      handler: signInStart(services),
    });
    signIn.get(paths.callbackRoute, { schema: { params: providerParams }, handler: callback(services) });
  });

  app.post(paths.signOut, { handler: signOut(services) });
  app.post(paths.linkRoute, { schema: { params: providerParams }, handler: linkStart(services) });
  app.post(paths.testSignInRoute, { schema: { params: providerParams }, handler: testSignInStart(services) });
  app.post(paths.backchannelLogoutRoute, { schema: { params: providerParams }, handler: backchannelLogout(services) });
  app.get(paths.signOut, async () => {
    // Signing out changes state: only by POST with CSRF protection, never by a link or an <img>.
    throw new AppError('method_not_allowed', { headers: { allow: 'POST' } });
  });
}
