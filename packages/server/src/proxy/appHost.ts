import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import replyFrom from '@fastify/reply-from';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { appComplete, appStart } from '../authorize/appHandshake.js';
import { checkAccess, type AccessResult } from '../authorize/checkAccess.js';
import { appCsrfToken, sendDeniedPage } from '../authorize/deniedResponse.js';
import { forwardAuthRoutes, isBrowserNavigation } from '../authorize/forwardAuth.js';
import type { AppConfig } from '../config/schema.js';
import { AppError, newReference } from '../errors.js';
import { installErrorHandling, sendError } from '../http/errorHandler.js';
import { paths, RESERVED_PREFIX } from '../paths.js';
import type { Services } from '../services.js';
import { originOf } from '../authorize/appRegistry.js';
import { endSession } from '../authenticate/signOut.js';
import { cookieOptions } from '../sessions/cookies.js';
import { isSameOrigin, presentedToken, tokensMatch } from '../sessions/csrf.js';
import { upstreamRequestHeaders, withoutOurSetCookies } from './upstreamHeaders.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The protected app this request's Host belongs to (app-host instance only). */
    gatehouseApp: AppConfig;
  }
}

/**
 * The app hosts: everything that arrives with the Host of a protected app. Gatehouse's own endpoints
 * there live under /.gatehouse/ (handshake, sign-out, JWKS); every other request is checked against
 * the app's policy and, if allowed, streamed to the upstream with the identity headers, through
 * @fastify/reply-from on undici.
 */
export async function buildAppHost(services: Services, log: FastifyBaseLogger | undefined): Promise<FastifyInstance> {
  const { apps, config } = services;
  const app = Fastify({
    ...(log ? { loggerInstance: log } : { logger: false }),
    genReqId: () => newReference(),
    // One log line per proxied request would cost more than the proxying itself; errors still log.
    disableRequestLogging: true,
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    bodyLimit: 64 * 1024,
  });
  installErrorHandling(app);
  await app.register(cookie);
  app.decorateRequest('gatehouseApp', null as unknown as AppConfig);
  app.addHook('onRequest', async (request) => {
    const match = apps.forHost(request.headers.host);
    // The dispatcher only sends app hosts here; anything else is a bug, and must not be proxied.
    if (!match) throw new AppError('not_found');
    request.gatehouseApp = match;
  });

  // Gatehouse's own endpoints on the app host.
  await app.register(async (own) => {
    await own.register(formbody, { bodyLimit: 4096 });
    const start = appStart(services);
    const complete = appComplete(services);
    own.get(paths.appStart, (request, reply) => start(request as FastifyRequest<{ Querystring: { rd?: string } }>, reply, request.gatehouseApp));
    own.get(paths.appComplete, (request, reply) =>
      complete(request as FastifyRequest<{ Querystring: { code?: string; state?: string } }>, reply, request.gatehouseApp),
    );
    own.get(paths.jwks, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(services.signingKeys.publicJwks()));
    own.post(paths.signOut, async (request, reply) => appSignOut(services, request, reply));
    // Proxies that keep the app's Host on the auth subrequest (Caddy's forward_auth does) reach these here.
    await own.register(forwardAuthRoutes, { services });
    own.all(`${RESERVED_PREFIX}/*`, async () => {
      throw new AppError('not_found');
    });
  });

  // Everything else is the app's.
  await app.register(async (proxied) => {
    await proxied.register(replyFrom, {
      undici: { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 },
      disableRequestLogging: true,
    });
    // Bodies stream through untouched: no parsing, no buffering.
    proxied.removeAllContentTypeParsers();
    proxied.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    proxied.all('/*', (request, reply) => proxy(services, request, reply));
  });

  await app.ready();
  return app;
}

async function proxy(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const app = request.gatehouseApp;
  const appOrigin = originOf(app);
  const result = await checkAccess(services, request, {
    app,
    appOrigin,
    method: request.method,
    path: request.url,
    token: request.cookies[services.cookies.appSession],
    preflight: Boolean(request.headers.origin && request.headers['access-control-request-method']),
  });
  switch (result.kind) {
    case 'unauthenticated':
      if (isBrowserNavigation(request.method, request.headers.accept)) {
        return reply
          .header('cache-control', 'no-store')
          .redirect(`${paths.appStart}?rd=${encodeURIComponent(`${appOrigin}${request.url}`)}`, 302);
      }
      return sendError(new AppError('unauthenticated'), request, reply, 'json');
    case 'denied':
      request.log.info({ app: app.id, userId: result.current.user.id, reason: result.decision.reason, reference: request.id }, 'access denied');
      if (!isBrowserNavigation(request.method, request.headers.accept)) {
        return sendError(new AppError('access_denied', { params: { email: result.current.user.email, app: app.name } }), request, reply, 'json');
      }
      return sendDeniedPage(services, request, reply, { app, email: result.current.user.email, url: `${appOrigin}${request.url}` });
    case 'public':
    case 'allowed':
      return forward(services, request, reply, app, appOrigin, result);
  }
}

/** Upstream base URL per app ("http://host:port/prefix" without a trailing slash), parsed once. */
const upstreamBases = new WeakMap<AppConfig, string>();
function upstreamBase(app: AppConfig): string {
  let base = upstreamBases.get(app);
  if (base === undefined) {
    const upstream = new URL(app.upstream);
    base = `${upstream.origin}${upstream.pathname.replace(/\/$/, '')}`;
    upstreamBases.set(app, base);
  }
  return base;
}

function forward(services: Services, request: FastifyRequest, reply: FastifyReply, app: AppConfig, appOrigin: string, result: AccessResult) {
  const target = `${upstreamBase(app)}${request.url}`;
  return reply.from(target, {
    rewriteRequestHeaders: (_request, headers) => {
      const upstreamHeaders = upstreamRequestHeaders(headers, {
        clientIp: request.ip,
        publicOrigin: appOrigin,
        preserveHost: app.preserveHost,
        identity: result.kind === 'allowed' ? result.headers : undefined,
      });
      if (app.passAccessToken) {
        // Only Gatehouse's own token for the user, never one the client brought along.
        const accessToken = result.kind === 'allowed' ? services.sessions.accessToken(result.current.session) : undefined;
        if (accessToken) upstreamHeaders.authorization = `Bearer ${accessToken}`;
        else delete upstreamHeaders.authorization;
      }
      return upstreamHeaders;
    },
    rewriteHeaders: (headers) => withoutOurSetCookies(headers),
    onError: (_reply, { error }) => {
      request.log.warn({ app: app.id, err: error }, 'upstream failed');
      sendError(new AppError('upstream_unavailable', { params: { app: app.name }, cause: error }), request, reply);
    },
  });
}

/** `POST /.gatehouse/sign-out` on an app host (the 403 page's button): ends the whole session. */
async function appSignOut(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const app = request.gatehouseApp;
  const appOrigin = originOf(app);
  const current = await services.resolver.app(request.cookies[services.cookies.appSession], appOrigin, request);
  reply.header('cache-control', 'no-store');
  const signedOut = `${services.portalOrigin}${paths.pages.signedOut}`;
  if (!current) return reply.clearCookie(services.cookies.appSession, cookieOptions(services.secureCookies)).redirect(signedOut, 303);
  const expected = appCsrfToken(services, request.cookies[services.cookies.appSession]);
  if (!isSameOrigin(request, appOrigin) || !tokensMatch(presentedToken(request), expected)) throw new AppError('csrf_failed');
  const next = await endSession(services, request, current, { everywhere: false, appId: app.id });
  return reply.clearCookie(services.cookies.appSession, cookieOptions(services.secureCookies)).redirect(next, 303);
}
