import { endpoints, pages } from '@gatehouse/contract';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { adminStatus } from './accounts/admins.js';
import { policySubject } from './authorize/policy.js';
import { sessionGroups } from './accounts/effectiveGroups.js';
import { adminArea } from './admin/index.js';
import { apiArea } from './api/index.js';
import { authenticateArea } from './authenticate/index.js';
import { idpLogoutUrl, signedOutReturn } from './authenticate/signOut.js';
import { forwardAuthEndpoint } from './proxy/forwardAuth.js';
import { proxyEndpoints } from './proxy/endpoints.js';
import { portalReturnToPolicy } from './apps/returnTo.js';
import { newReference } from './errors.js';
import { requireContract, useZodSchemas } from './http/contract.js';
import { canonicalHost } from './http/canonicalHost.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errorHandler.js';
import { healthRoutes } from './operations/health.js';
import { requestNotes, requestObserver } from './operations/observe.js';
import { DebugRequestLogging } from './operations/requestLogging.js';
import { spaRoutes } from './http/spa.js';
import { docsRoutes } from './http/docs.js';
import type { Services } from './services.js';
import { buildProxy } from './proxy/index.js';
import { sessionsArea } from './sessions/index.js';
import { provideArea } from './provide/index.js';
import { catalogueOfApps } from './provide/clients.js';
import { opAdapterFactory } from './provide/adapter.js';
import { logoutContinuations } from './provide/logoutContinuation.js';
import { endSession } from './sessions/endSession.js';
import { localReload, readConfigFrom, type Reload } from './reload.js';
import type { CurrentSession } from './sessions/sessionResolver.js';

export interface BuildOptions {
  loggerInstance?: FastifyBaseLogger;
  /** The built front end (packages/web/dist by default). */
  webRoot?: string;
  /**
   * What the console's "Reload configuration" does: in a worker of several, asking the primary, which
   * has every worker apply it (cli/start.ts, reload.ts); by default, reading the config file again here.
   */
  reload?: Reload;
}

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../web/dist', import.meta.url));
/** Gatehouse's documentation, which the console links to (http/docs.ts). */
export const DEFAULT_DOCS_ROOT = fileURLToPath(new URL('../../../docs', import.meta.url));

/** Assembles the Gatehouse HTTP application. It never listens: cli/start.ts (or a test) decides that. */
export async function buildApp(services: Services, options: BuildOptions = {}): Promise<FastifyInstance> {
  // The configuration in force is `running.current`, read at use: a reload replaces it (config/running.ts).
  const { running } = services;
  // Ending a session on an app host ends it at the IdP too; only authenticate/ talks to IdPs.
  const logoutUrl = (providerId: string, idToken: string | undefined) => idpLogoutUrl(services, providerId, idToken);
  // The hot path, the app hosts and WebSockets, in front of the portal (proxy/index.ts).
  // Metrics and the access log watch every request from its arrival, when either is on.
  const observer = requestObserver(services.metrics, services.accessLog);
  // What the portal's areas learn of a request (whose session, which app, what was decided) for both.
  const notes = requestNotes(observer);
  const proxy = await buildProxy({ deps: services, logoutUrl, loggerInstance: options.loggerInstance, observer });
  const app = Fastify({
    serverFactory: (portalHandler) => proxy.createServer(portalHandler),
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: false }),
    // Forwarded headers and client IPs are believed only from configured proxies (PRODUCT.md).
    trustProxy: running.current.trustedProxies.length > 0 ? running.current.trustedProxies : false,
    // The request id (reqId in the log) doubles as the reference id people see on error pages.
    // With the access log on, a request has its id from its arrival: the log's line and the error page agree.
    genReqId: observer ? (raw) => observer.of(raw)?.id || newReference() : () => newReference(),
    // One line per request only at debug: the access log is the record of requests (operations/requestLogging.ts).
    logController: new DebugRequestLogging(),
    // Requests Node's parser refuses get a catalogue answer too, not Fastify's default JSON.
    clientErrorHandler: clientErrorHandler(proxy.log),
    // And so do addresses Fastify's router refuses (a path that does not percent-decode, an over-long parameter).
    frameworkErrors,
    bodyLimit: 64 * 1024,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  });

  installErrorHandling(app);
  // Routes are validated and serialised by their zod schemas (the contract's, http/contract.ts).
  useZodSchemas(app);
  // Every JSON route comes from the contract: a hand-registered one stops the start (the leak guard).
  requireContract(app);
  // Before the server stops listening and waits for its connections: bridged WebSockets are told it is going away.
  app.addHook('preClose', async () => proxy.closing());
  app.addHook('onClose', async () => proxy.close());
  await app.register(cookie);
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        // Mantine writes CSS variables into style attributes and a <style> element.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'https:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
        // No form-action: Chromium applies it to the redirect after sign-out, which goes to the IdP.
      },
    },
    // Cross-origin isolation headers would break nothing here but add nothing either.
    crossOriginEmbedderPolicy: false,
    strictTransportSecurity: services.secureCookies ? { maxAge: 31536000, includeSubDomains: false } : false,
  });
  // The portal answers at publicUrl's host: a loopback alias is sent there, an unknown host refused (http/canonicalHost.ts).
  await app.register(canonicalHost, {
    portalOrigin: services.portalOrigin,
    listenPort: running.current.listen.port,
    isForwardAuth: (url) => forwardAuthEndpoint(url) !== undefined,
  });
  const oidcClients = catalogueOfApps(services.apps, services.clientSecrets);
  // An app's RP-initiated logout goes through the IdP's logout as signing out does, then back to the
  // app: the continuation is issued by the OpenID Provider and redeemed at /signed-out.
  const continuations = logoutContinuations({ secretKey: services.secrets.cookieKey, issuer: services.portalOrigin, clients: oidcClients, redeemed: services.opStore });
  const groupsOf = (current: CurrentSession) => sessionGroups(services.providers, current);
  const isAdmin = (current: CurrentSession) => adminStatus(running.current.admins, current.user, groupsOf(current)).admin;
  await app.register(sessionsArea, {
    deps: {
      resolver: services.resolver,
      sessions: services.sessions,
      providerName: (id) => services.providers.name(id),
      cookies: services.cookies,
      portalOrigin: services.portalOrigin,
      cookieKey: services.secrets.cookieKey,
      isAdmin,
      notes,
    },
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Gatehouse API', version: '1', description: 'The JSON API behind the portal. Errors are RFC 9457 problem details.' },
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: services.cookies.session },
          csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'From GET /api/csrf; required on every non-GET request.' },
        },
      },
      security: [{ session: [] }],
    },
    // Only the documented JSON API (routes with tags) goes into the document.
    hideUntagged: true,
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  app.get(endpoints.apiDocs, { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes, {
    database: services.database,
    changes: services.changes,
    providers: services.providers,
    running: services.running,
    // Each check of readiness only for a signed-in admin of the portal; anyone else gets the status.
    fromAdmin: async (request) => {
      const current = await request.currentSession();
      return current !== undefined && isAdmin(current);
    },
  });
  await app.register(authenticateArea, {
    running,
    portalOrigin: services.portalOrigin,
    secureCookies: services.secureCookies,
    cookies: services.cookies,
    providers: services.providers,
    attempts: services.attempts,
    accounts: services.accounts,
    sessions: services.sessions,
    audit: services.audit,
    signInSettings: services.signInSettings,
    apps: services.apps,
    logoutTokens: services.logoutTokens,
    isAdmin,
    sharedLimits: services.sharedLimits,
    nodeLimits: services.nodeLimits,
    metrics: services.metrics,
    publishTested: (providerId) => (services.providers.hidden(providerId) ? services.providerStore.publish(providerId, 'test') : Promise.resolve(false)),
  });
  // The OpenID Provider of the apps that sign in with OpenID Connect, on the portal (provide/), its
  // storage on the database (provide/adapter.ts).
  await app.register(provideArea, {
    deps: {
      clients: oidcClients,
      portalOrigin: services.portalOrigin,
      endSession: (request, current, appId) =>
        endSession({ sessions: services.sessions, audit: services.audit, portalOrigin: services.portalOrigin, logoutUrl }, request, current, { everywhere: false, appId, rpInitiated: true }),
      continuations,
      secureCookies: services.secureCookies,
      cookies: services.cookies,
      secretKey: services.secrets.cookieKey,
      idTokenKeys: services.idTokenKeys,
      adapter: opAdapterFactory(services.opStore),
      grants: services.opStore,
      // Failed client authentications are counted where the sign-in limit counts (Redis, else the node's primary).
      limits: services.sharedLimits ?? services.nodeLimits,
      changes: services.changes,
      attemptLifetime: () => running.current.signIn.attemptLifetime,
      log: options.loggerInstance ?? app.log,
      metrics: services.metrics,
      notes,
      sessions: services.resolver,
      providers: services.providers,
      running,
      audit: services.audit,
    },
  });
  await app.register(apiArea, {
    // Read at each request: a config reload may rename the organisation.
    organizationName: () => running.current.organization.name,
    providers: services.providers,
    sessions: services.sessions,
    accounts: services.accounts,
    audit: services.audit,
    apps: services.apps,
    cookieKey: services.secrets.cookieKey,
    returnToPolicy: () => portalReturnToPolicy(services),
    groupsOf,
    isAdmin,
    policySubjectOf: (current) => policySubject(running.current.admins, current.user, groupsOf(current)),
    grants: services.opStore,
    endGrants: services.endGrants,
  });
  await app.register(adminArea, {
    portalOrigin: services.portalOrigin,
    accounts: services.accounts,
    directory: services.directory,
    sessions: services.sessions,
    changes: services.changes,
    audit: services.audit,
    apps: services.apps,
    appStore: services.appStore,
    clientSecrets: services.clientSecrets,
    providers: services.providers,
    providerStore: services.providerStore,
    signInSettings: services.signInSettings,
    reviewAdmission: services.reviewAdmission,
    grants: services.opStore,
    endGrants: services.endGrants,
    // The root logger, not app.log (a child of it): a reloaded log.level is set on the logger every other
    // one descends from, so that all of them follow it.
    reloadConfig: options.reload ?? localReload(services, readConfigFrom(services.running.file), options.loggerInstance ?? app.log),
    running,
  });
  await app.register(proxyEndpoints, { deps: services });
  await app.register(docsRoutes, { root: DEFAULT_DOCS_ROOT });
  await app.register(spaRoutes, {
    webRoot: options.webRoot ?? DEFAULT_WEB_ROOT,
    before: { [pages.signedOut.path]: signedOutReturn({ cookies: services.cookies, secureCookies: services.secureCookies, continuations }) },
  });
  return app;
}
