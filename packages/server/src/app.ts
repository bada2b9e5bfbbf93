import { createServer, ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { pino } from 'pino';
import { adminRoutes } from './admin/index.js';
import { appsRoutes } from './api/appsRoutes.js';
import { meRoutes } from './api/meRoutes.js';
import { appAuthorize } from './authorize/appHandshake.js';
import { forwardAuthRoutes } from './authorize/forwardAuth.js';
import { sessionRoutes } from './api/sessionRoutes.js';
import { authenticateRoutes } from './authenticate/index.js';
import { idpLogoutUrl } from './authenticate/signOut.js';
import { AppError, newReference, toAppError } from './errors.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling, refuseUpgrade } from './http/errorHandler.js';
import { paths, RESERVED_PREFIX } from './paths.js';
import { healthRoutes } from './http/health.js';
import { spaRoutes } from './http/spa.js';
import type { Services } from './services.js';
import { buildAppHost } from './proxy/appHost.js';
import { UpstreamForwarder } from './proxy/forwarder.js';
import { hotPath, requestProblem } from './proxy/hotPath.js';
import { LiveAccess } from './proxy/liveAccess.js';
import { webSocketProxy } from './proxy/websocket.js';
import { sessionPlugin } from './sessions/sessionPlugin.js';

export interface BuildOptions {
  loggerInstance?: FastifyBaseLogger;
  /** The built front end (packages/web/dist by default). */
  webRoot?: string;
}

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../web/dist', import.meta.url));

/** Assembles the Gatehouse HTTP application. It never listens: main.ts (or a test) decides that. */
export async function buildApp(services: Services, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  // One listening server: allowed proxied requests and forward-auth checks are answered on the hot path
  // (node:http); everything else for a protected app's host goes to the app-host instance (handshake,
  // pages, errors), and the rest to the portal — two encapsulated Fastify applications.
  const log = options.loggerInstance ?? pino({ enabled: false });
  // WebSockets and streamed answers answer to their access while they last (proxy/liveAccess.ts).
  const live = new LiveAccess(services, log);
  const forwarder = new UpstreamForwarder(services.sessions, log, live);
  services.apps.onChange(() => forwarder.retain(new Set(services.apps.all().map((app) => app.upstream))));
  // Ending a session on an app host ends it at the IdP too; only authenticate/ talks to IdPs.
  const logoutUrl = (providerId: string, idToken: string | undefined) => idpLogoutUrl(services, providerId, idToken);
  const appHost = await buildAppHost(services, forwarder, options.loggerInstance, logoutUrl);
  const upgradeToApp = webSocketProxy(services, appHost.log, live);
  const app = Fastify({
    serverFactory: (portalHandler) => {
      const dispatch = hotPath({ services, forwarder, log: appHost.log, portal: portalHandler, appHost: appHost.routing });
      // The hot path answers a missing (or repeated) Host itself, with a catalogue answer (http/hostHeader.ts).
      const server = createServer({ requireHostHeader: false }, dispatch);
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        // Node hands an upgrade's socket over without its own error listener: a client that resets the
        // connection before the answer is written would otherwise be an uncaught error, and end the process.
        socket.on('error', ignorePeerGone);
        const target = services.apps.forHost(request.headers.host);
        const reserved = request.url?.startsWith(`${RESERVED_PREFIX}/`) ?? false;
        if (!target || reserved || !isWebSocketUpgrade(request) || requestProblem(request)) {
          // Not a WebSocket for an app — a proxy's auth subrequest that kept the client's Upgrade header,
          // another protocol (curl --http2 asks for h2c, which a server may ignore), or not a valid
          // request (a target that is not a path, a bad Host): answer it as the plain HTTP request it
          // also is. Node has already let go of the connection's parser, so a body could not be read:
          // such a request is refused instead.
          if (hasBody(request)) {
            const reason = 'a request that asks to switch protocols cannot carry a body here; send it without the Upgrade header';
            return refuseUpgrade(socket, new AppError('bad_request', { params: { reason } }), appHost.log);
          }
          const response = new ServerResponse(request);
          response.assignSocket(socket as Socket);
          response.shouldKeepAlive = false;
          response.once('finish', () => socket.end());
          dispatch(request, response);
          return;
        }
        upgradeToApp(request, socket, head, target).catch((error: unknown) => refuseUpgrade(socket, toAppError(error), appHost.log));
      });
      // Without a listener Node drops a CONNECT without a word: say why instead.
      server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
        socket.on('error', ignorePeerGone);
        const reason = 'CONNECT is for forward proxies, and Gatehouse is not one';
        refuseUpgrade(socket, new AppError('bad_request', { params: { reason } }), appHost.log);
      });
      return server;
    },
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: false }),
    // Forwarded headers and client IPs are believed only from configured proxies (PRODUCT.md).
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // The request id (reqId in the log) doubles as the reference id people see on error pages.
    genReqId: () => newReference(),
    // Requests Node's parser refuses get a catalogue answer too, not Fastify's default JSON.
    clientErrorHandler: clientErrorHandler(appHost.log),
    // And so do addresses Fastify's router refuses (a path that does not percent-decode, an over-long parameter).
    frameworkErrors,
    bodyLimit: 64 * 1024,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  });

  installErrorHandling(app);
  // Before the server stops listening and waits for its connections: bridged WebSockets are told it is going away.
  app.addHook('preClose', async () => live.close());
  app.addHook('onClose', async () => {
    await appHost.close();
    await forwarder.close();
  });
  app.addSchema({
    $id: 'problem',
    type: 'object',
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string' },
      reference: { type: 'string' },
    },
  });

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
  await app.register(sessionPlugin, { services });
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
  });
  app.get(paths.api.docs, { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes, { services });
  await app.register(authenticateRoutes, { services });
  await app.register(sessionRoutes, { services });
  await app.register(meRoutes, { services });
  await app.register(appsRoutes, { services });
  await app.register(adminRoutes, { services });
  await app.register(forwardAuthRoutes, { services });
  app.get(paths.appAuthorize, appAuthorize(services));
  app.get(paths.jwks, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(services.signingKeys.publicJwks()));
  await app.register(spaRoutes, { webRoot: options.webRoot ?? DEFAULT_WEB_ROOT, services });
  return app;
}

/** A socket error on an upgrade: the peer went away (reset, broken pipe), and Node destroys the socket itself. */
function ignorePeerGone(): void {}

/** An RFC 6455 opening handshake's request line and Upgrade header; anything else is served as plain HTTP. */
function isWebSocketUpgrade(request: IncomingMessage): boolean {
  return request.method === 'GET' && request.headers.upgrade?.trim().toLowerCase() === 'websocket';
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
