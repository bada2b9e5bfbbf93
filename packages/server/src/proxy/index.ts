import { RESERVED_PREFIX } from '@gatehouse/contract';
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import type { AppRegistry } from '../apps/appRegistry.js';
import { AppError, toAppError } from '../errors.js';
import { refuseUpgrade } from '../http/errorHandler.js';
import { NO_METRICS } from '../operations/metrics.js';
import type { RequestObserver } from '../operations/observe.js';
import type { IdpLogoutUrl } from '../sessions/endSession.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { buildAppHost, type AppHostDeps } from './appHost.js';
import { UpstreamForwarder } from './forwarder.js';
import { hotPath, requestProblem, type Handler, type HotPathDeps } from './hotPath.js';
import { LiveAccess, type LiveAccessDeps } from './liveAccess.js';
import { proxiedAnswer } from './proxiedAnswer.js';
import { webSocketProxy, type WebSocketDeps } from './websocket.js';

/** Everything the proxy area takes; the composition root (app.ts) hands it in. */
export type ProxyDeps = AppHostDeps &
  HotPathDeps &
  LiveAccessDeps &
  WebSocketDeps & {
    sessions: Pick<SessionStore, 'accessToken'>;
    apps: Pick<AppRegistry, 'all' | 'forHost' | 'guarded' | 'onChange'>;
  };

export interface ProxyOptions {
  deps: ProxyDeps;
  /** The IdP's end-session URL, for the app host's sign-out (authenticate/ builds it). */
  logoutUrl: IdpLogoutUrl;
  loggerInstance?: FastifyBaseLogger | undefined;
  /** Metrics and the access log, when either is on (operations/observe.ts). */
  observer?: RequestObserver | undefined;
}

export interface Proxy {
  /** The app hosts' logger: what is answered outside Fastify (the hot path, refused upgrades) logs here. */
  log: FastifyBaseLogger;
  /** The one listening server: the hot path, the app-host instance, and `portal` for everything else. */
  createServer(portal: Handler): Server;
  /** The server is about to stop listening: bridged WebSockets are told it is going away. */
  closing(): void;
  close(): Promise<void>;
}

/**
 * The proxy area's door. One listening server: allowed proxied requests and forward-auth checks are
 * answered on the hot path (node:http); everything else for a protected app's host goes to the app-host
 * instance (handshake, pages, errors), and the rest to the portal — two encapsulated Fastify applications.
 */
export async function buildProxy({ deps, logoutUrl, loggerInstance, observer }: ProxyOptions): Promise<Proxy> {
  const log = loggerInstance ?? pino({ enabled: false });
  // WebSockets and streamed answers answer to their access while they last (proxy/liveAccess.ts).
  const live = new LiveAccess(deps, log);
  const forwarder = new UpstreamForwarder(deps.sessions, log, live, deps.metrics ?? NO_METRICS, observer);
  deps.apps.onChange(() => forwarder.retain(new Set(deps.apps.all().flatMap((app) => (app.upstream === undefined ? [] : [app.upstream])))));
  // One writer of the proxy's answer for both the hot path and the app-host instance.
  const answer = proxiedAnswer(forwarder, deps.running.current.trustedProxies);
  const appHost = await buildAppHost(deps, answer, loggerInstance, logoutUrl);
  const upgradeToApp = webSocketProxy(deps, appHost.log, live);

  return {
    log: appHost.log,
    createServer(portal) {
      const dispatch = hotPath({ deps, answer, log: appHost.log, portal, appHost: appHost.routing, observer });
      // The hot path answers a missing (or repeated) Host itself, with a catalogue answer (http/hostHeader.ts).
      const server = createServer({ requireHostHeader: false }, dispatch);
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        // Node hands an upgrade's socket over without its own error listener: a client that resets the
        // connection before the answer is written would otherwise be an uncaught error, and end the process.
        socket.on('error', ignorePeerGone);
        const target = deps.apps.forHost(request.headers.host);
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
    closing: () => live.close(),
    async close() {
      await appHost.close();
      await forwarder.close();
    },
  };
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
