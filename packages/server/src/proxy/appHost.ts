import { endpoints, pages, RESERVED_PREFIX } from '@gatehouse/contract';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { originOf, type AppRegistry } from '../apps/appRegistry.js';
import { checkAccess } from '../authorize/checkAccess.js';
import { appCsrfToken, sendDeniedPage } from './deniedResponse.js';
import { isBrowserNavigation } from './forwardAuth.js';
import { proxyEndpoints, type ProxyEndpointsDeps } from './endpoints.js';
import type { AppConfig } from '../config/schema.js';
import { AppError, newReference } from '../errors.js';
import { requireContract, useZodSchemas } from '../http/contract.js';
import { frameworkErrors, installErrorHandling, sendError } from '../http/errorHandler.js';
import { PAGE_SECURITY_HEADERS } from '../http/html.js';
import { cookieOptions } from '../sessions/cookies.js';
import { isSameOrigin, presentedToken, tokensMatch } from '../sessions/csrf.js';
import { endSession, type EndSessionDeps, type IdpLogoutUrl } from '../sessions/endSession.js';
import { installGuard, signedIn } from '../sessions/guard.js';
import type { SessionResolver } from '../sessions/sessionResolver.js';
import type { ProxiedAnswer } from './proxiedAnswer.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The protected app this request's Host belongs to (app-host instance only). */
    gatehouseApp: AppConfig;
  }
}

/**
 * What the app hosts take: the guarding endpoints (endpoints.ts) and the access check, ending a session
 * (without the IdP's part, which is handed in), and the apps by host.
 */
export type AppHostDeps = ProxyEndpointsDeps &
  Omit<EndSessionDeps, 'logoutUrl'> & {
    resolver: Pick<SessionResolver, 'app' | 'cachedApp'>;
    apps: Pick<AppRegistry, 'forHost'>;
    secureCookies: boolean;
  };

/**
 * The app hosts: everything that arrives with the Host of a protected app. Gatehouse's own endpoints
 * there live under /.gatehouse/ (handshake, sign-out, JWKS); every other request is checked against
 * the app's policy and, if allowed, streamed to the upstream with the identity headers by the
 * forwarder (undici). Allowed requests and signed-out navigations are normally answered before they
 * reach this instance (proxy/hotPath.ts); it answers the rest in full: the 401 and 403 answers and
 * pages, errors, and whatever the hot path leaves to it.
 */
export async function buildAppHost(
  deps: AppHostDeps,
  answer: ProxiedAnswer,
  log: FastifyBaseLogger | undefined,
  logoutUrl: IdpLogoutUrl,
): Promise<FastifyInstance> {
  const { apps } = deps;
  // Whom to believe as a proxy is fixed at start (only a restart changes trustedProxies).
  const { trustedProxies } = deps.running.current;
  const ending: EndSessionDeps = { sessions: deps.sessions, audit: deps.audit, portalOrigin: deps.portalOrigin, logoutUrl };
  const app = Fastify({
    ...(log ? { loggerInstance: log } : { logger: false }),
    genReqId: () => newReference(),
    // One log line per request here would cost more than answering it; errors still log.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustedProxies.length > 0 ? trustedProxies : false,
    bodyLimit: 64 * 1024,
    // A path its router cannot decode ("/%", "/.gatehouse/%zz") gets the catalogue's 400, as on the portal.
    frameworkErrors,
  });
  installErrorHandling(app);
  useZodSchemas(app);
  // Every JSON route comes from the contract: a hand-registered one stops the start (the leak guard).
  requireContract(app);
  await app.register(cookie);
  app.decorateRequest('gatehouseApp', null as unknown as AppConfig);
  app.addHook('onRequest', async (request, reply) => {
    // Every answer Gatehouse writes on an app host (pages, errors, the handshake's redirects): never
    // framed, never sniffed (http/html.ts). Kept by the reply, so a proxied answer (hijacked) has none.
    reply.headers(PAGE_SECURITY_HEADERS);
    const match = apps.forHost(request.headers.host);
    // The dispatcher only sends app hosts here; anything else is a bug, and must not be proxied.
    if (!match) throw new AppError('not_found');
    request.gatehouseApp = match;
  });

  // Gatehouse's own endpoints on the app host.
  await app.register(async (own) => {
    // The router matches the decoded path, so "/%2egatehouse/auth" would reach these; but only the
    // literal "/.gatehouse/" is Gatehouse's (the hot path decides so too): anything else is the app's,
    // and is answered as the app's request is.
    own.addHook('onRequest', async (request, reply) => {
      const url = request.raw.url ?? '/';
      if (url.startsWith(`${RESERVED_PREFIX}/`) || url === RESERVED_PREFIX || url.startsWith(`${RESERVED_PREFIX}?`)) return;
      return proxy(deps, answer, request, reply);
    });
    await own.register(formbody, { bodyLimit: 4096 });
    // The handshake's app side, the JWKS, and forward-auth: proxies that keep the app's Host on the auth
    // subrequest (Caddy's forward_auth does) reach it here.
    await own.register(proxyEndpoints, { deps, appOf: (request) => request.gatehouseApp });
    // Signing out of the app host: its own session and CSRF token (the denied page's form), not the portal's.
    installGuard(own, {
      sessionOf: (request) => deps.resolver.app(request.cookies[deps.cookies.appSession], originOf(request.gatehouseApp), request),
      csrfValid: (request) =>
        isSameOrigin(request, originOf(request.gatehouseApp)) && tokensMatch(presentedToken(request), appCsrfToken(deps, request.cookies[deps.cookies.appSession])),
      isAdmin: () => false,
    });
    own.post(endpoints.signOut, {
      config: { access: 'session', csrf: 'form', whenSignedOut: (_request, reply) => signedOutOfApp(deps, reply) },
      handler: async (request, reply) => appSignOut(deps, ending, request, reply),
    });
    // "Switch account" on the 403 page: the session ends here, then the portal's next sign-in asks the IdP to let the person choose.
    own.post(endpoints.switchAccount, {
      schema: { body: z.object({ rd: z.string().max(2048).optional() }).optional() },
      config: { access: 'session', csrf: 'form', whenSignedOut: (request, reply) => toChooseAccount(deps, request, reply) },
      handler: async (request, reply) => appSwitchAccount(deps, ending, request, reply),
    });
    own.all(`${RESERVED_PREFIX}/*`, async () => {
      throw new AppError('not_found');
    });
  });

  // Everything else is the app's.
  await app.register(async (proxied) => {
    // Bodies stream through untouched: no parsing, no buffering.
    proxied.removeAllContentTypeParsers();
    proxied.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    proxied.all('/*', (request, reply) => proxy(deps, answer, request, reply));
  });

  await app.ready();
  return app;
}

async function proxy(deps: AppHostDeps, answer: ProxiedAnswer, request: FastifyRequest, reply: FastifyReply) {
  const app = request.gatehouseApp;
  const appOrigin = originOf(app);
  const result = await checkAccess(deps, request, {
    app,
    appOrigin,
    method: request.method,
    path: request.url,
    token: request.cookies[deps.cookies.appSession],
    preflight: Boolean(request.headers.origin && request.headers['access-control-request-method']),
  });
  const browser = isBrowserNavigation(request.method, request.headers.accept);
  if (result.kind === 'unauthenticated' && !browser) return sendError(new AppError('unauthenticated'), request, reply, 'json');
  if (result.kind === 'denied') {
    request.log.info({ app: app.id, userId: result.current.user.id, reason: result.decision.reason, reference: request.id }, 'access denied');
    if (!browser) return sendError(new AppError('access_denied', { params: { email: result.current.user.email, app: app.name } }), request, reply, 'json');
    return sendDeniedPage(deps, request, reply, { app, email: result.current.user.email, url: `${appOrigin}${request.url}` });
  }
  // Forwarded, or a signed-out navigation sent to sign in: written as the hot path writes it.
  reply.hijack();
  answer(request.raw, reply.raw, app, appOrigin, result);
  return reply;
}

/** `POST /.gatehouse/sign-out` on an app host (the 403 page's button): ends the whole session. */
async function appSignOut(deps: AppHostDeps, ending: EndSessionDeps, request: FastifyRequest, reply: FastifyReply) {
  // Signed in on this app, with this app host's own CSRF token: the route's guard (buildAppHost).
  const current = await signedIn(request);
  // The logout state is not bound here: a cookie set on this app host never reaches the portal's
  // /signed-out, which takes a state it cannot recognise for what it is, nothing (authenticate/signOut.ts).
  const { location } = await endSession(ending, request, current, { everywhere: false, appId: request.gatehouseApp.id });
  return reply.header('cache-control', 'no-store').clearCookie(deps.cookies.appSession, cookieOptions(deps.secureCookies)).redirect(location, 303);
}

/**
 * `POST /.gatehouse/switch-account` on an app host (the 403 page's "Switch account"): ends the whole
 * session, as signing out does, but not at the IdP; the portal's next sign-in asks the IdP to let the
 * person choose an account (authenticate/signInStart.ts), and comes back to the page that was refused.
 */
async function appSwitchAccount(deps: AppHostDeps, ending: EndSessionDeps, request: FastifyRequest, reply: FastifyReply) {
  // Signed in on this app, with this app host's own CSRF token: the route's guard (buildAppHost).
  const current = await signedIn(request);
  await endSession(ending, request, current, { everywhere: false, appId: request.gatehouseApp.id, switchAccount: true });
  return toChooseAccount(deps, request, reply);
}

/** To the portal, which has the next sign-in let the person choose, back to `rd` when it is on this app. */
function toChooseAccount(deps: AppHostDeps, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appOrigin = originOf(request.gatehouseApp);
  const rd = (request.body as { rd?: unknown } | undefined)?.rd;
  // Threat: open redirect. Only a URL of this very app is carried on (the portal checks it again).
  const returnTo = typeof rd === 'string' && URL.canParse(rd) && new URL(rd).origin === appOrigin ? new URL(rd).href : `${appOrigin}/`;
  return reply
    .header('cache-control', 'no-store')
    .clearCookie(deps.cookies.appSession, cookieOptions(deps.secureCookies))
    .redirect(`${deps.portalOrigin}${endpoints.switchAccountUrl(returnTo)}`, 303);
}

/** Signed out already: whatever app cookie is left goes, and the browser lands on the portal's /signed-out. */
function signedOutOfApp(deps: AppHostDeps, reply: FastifyReply): FastifyReply {
  return reply
    .header('cache-control', 'no-store')
    .clearCookie(deps.cookies.appSession, cookieOptions(deps.secureCookies))
    .redirect(`${deps.portalOrigin}${pages.signedOut.path}`, 303);
}
