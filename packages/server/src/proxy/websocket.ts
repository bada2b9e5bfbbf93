import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import { checkAccess, type AccessDeps } from '../authorize/checkAccess.js';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import { originOf } from '../apps/appRegistry.js';
import { AppError } from '../errors.js';
import { refuseUpgrade } from '../http/errorHandler.js';
import { NO_METRICS, type Metrics } from '../operations/metrics.js';
import { forwardedForOf } from '../http/trustedProxies.js';
import { describeDecision } from './hotPath.js';
import type { LiveAccess } from './liveAccess.js';
import { upstreamRequestHeaders } from './upstreamHeaders.js';

/** How long a side that was told to close may take to answer before its connection is cut. */
export const CLOSE_GRACE_MS = 5_000;

/**
 * WebSocket upgrades on app hosts: checked exactly like any request (session, policy), then bridged to
 * the upstream with the `ws` library, message for message. Each bridge answers to its access for as
 * long as it is open (liveAccess.ts): a revocation closes it at once, and so does a later check that
 * finds the session expired or the user no longer allowed. Closing tells the upstream first, so nothing
 * the client sends after that reaches the app, and cuts a side that does not answer within
 * CLOSE_GRACE_MS.
 */
/** What bridging a WebSocket takes: the access check, and which proxies to believe for X-Forwarded-For. */
export interface WebSocketDeps extends AccessDeps {
  running: InForce<Pick<Config, 'admins' | 'trustedProxies'>>;
  /** WebSockets open by app, and upstreams that could not be reached. */
  metrics?: Metrics;
}

export function webSocketProxy(deps: WebSocketDeps, log: FastifyBaseLogger, live: LiveAccess) {
  const server = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  const forwardedFor = forwardedForOf(deps.running.current.trustedProxies);
  const metrics = deps.metrics ?? NO_METRICS;

  return async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, app: AppConfig): Promise<void> {
    const appOrigin = originOf(app);
    // Counted like every other access decision of the proxy (operations/metrics.ts): an upgrade refused before
    // its policy is asked (WebSockets off for the app, a foreign origin) is `refused`.
    if (!app.websockets) {
      metrics.decision('proxy', app.id, 'refused', 'none');
      return refuseUpgrade(socket, new AppError('not_found'), log);
    }
    const foreign = foreignOrigin(request, appOrigin);
    if (foreign !== undefined) {
      metrics.decision('proxy', app.id, 'refused', 'none');
      return refuseUpgrade(socket, new AppError('csrf_failed', { cause: new Error(`WebSocket upgrade from origin ${JSON.stringify(foreign)}, not ${appOrigin}`) }), log);
    }
    const { token, context } = live.accessOf(request);
    const result = await checkAccess(deps, context, { app, appOrigin, method: 'GET', path: request.url ?? '/', token, preflight: false });
    const { decision, rule } = describeDecision(result);
    metrics.decision('proxy', app.id, decision, rule);
    if (result.kind === 'unauthenticated') return refuseUpgrade(socket, new AppError('unauthenticated'), log);
    if (result.kind === 'denied') {
      return refuseUpgrade(socket, new AppError('access_denied', { params: { email: result.current.user.email, app: app.name } }), log);
    }

    if (app.upstream === undefined) return refuseUpgrade(socket, new AppError('no_upstream', { params: { app: app.name } }), log);
    const upstream = new URL(app.upstream);
    upstream.protocol = upstream.protocol === 'https:' ? 'wss:' : 'ws:';
    const target = `${upstream.origin}${upstream.pathname.replace(/\/$/, '')}${request.url ?? '/'}`;
    const headers = upstreamRequestHeaders(request.headers, {
      forwardedFor: forwardedFor(request),
      clientAddress: context.ip ?? '',
      publicOrigin: appOrigin,
      preserveHost: app.preserveHost,
      identity: result.kind === 'allowed' ? result.headers : undefined,
    });
    // The ws client writes its own handshake headers; pass only the end-to-end ones.
    for (const name of ['host', 'connection', 'upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol']) {
      if (name !== 'host' || !app.preserveHost) delete headers[name];
    }
    const protocols = request.headers['sec-websocket-protocol']?.split(',').map((p) => p.trim()).filter(Boolean);
    const toUpstream = new WebSocket(target, protocols, { headers: headers as Record<string, string>, perMessageDeflate: false });

    let bridged = false;
    toUpstream.once('error', (error) => {
      // Once bridged, the socket speaks WebSocket: the bridge's own handlers end both sides instead.
      if (bridged) return;
      metrics.upstreamError(app.id);
      if (socket.writable) refuseUpgrade(socket, new AppError('upstream_unavailable', { params: { app: app.name }, cause: error }), log);
      else socket.destroy();
    });
    // The client gave up while the upstream was still being reached, or its handshake was refused
    // (ws answers a bad one itself and never calls back): let the upstream go.
    socket.once('close', () => {
      if (!bridged) toUpstream.terminate();
    });
    toUpstream.once('open', () => {
      server.handleUpgrade(request, socket, head, (client) => {
        bridged = true;
        metrics.webSocket(app.id, 1);
        client.once('close', () => metrics.webSocket(app.id, -1));
        const close = (code: number, reason: string) => {
          // The upstream first: the relay drops whatever the client sends to a side that is no longer open.
          closeWithin(toUpstream, code, reason);
          closeWithin(client, code, reason);
        };
        const sessionId = result.kind === 'allowed' ? result.current.session.id : undefined;
        const untrack = live.track({ app, path: request.url ?? '/', token, context, sessionId, kind: 'websocket' }, close);
        client.once('close', untrack);
        toUpstream.once('close', untrack);
        relay(client, toUpstream);
        relay(toUpstream, client);
        client.once('close', (code, reason) => toUpstream.close(validCloseCode(code), reason));
        toUpstream.once('close', (code, reason) => client.close(validCloseCode(code), reason));
        client.on('error', () => toUpstream.terminate());
        toUpstream.on('error', () => client.terminate());
      });
    });
  };
}

/**
 * The origin a WebSocket upgrade came from, when it is not the app's own. Threat: Cross-Site WebSocket
 * Hijacking — a page on another site opens a socket to the app, and the browser sends the app host's
 * cookie with it (the handshake is a GET, and SameSite=Lax does not stop it between sites on loopback or
 * sharing a registrable domain); unlike fetch, no CORS check ever applies to what the page then reads.
 * Browsers always send Origin on a WebSocket handshake (RFC 6455 §4.1; `Sec-WebSocket-Origin` in the
 * draft version 8 that `ws` still accepts), so an upgrade without either comes from a client that is
 * not a browser, and carries only what it chose to. Anything else — another origin, `null`, an empty or
 * repeated header (Node joins repeats with ", ") — must be exactly the app's origin.
 */
function foreignOrigin(request: IncomingMessage, appOrigin: string): string | undefined {
  for (const name of ['origin', 'sec-websocket-origin'] as const) {
    const value = request.headers[name];
    if (value !== undefined && value !== appOrigin) return String(value);
  }
  return undefined;
}

/**
 * Starts a WebSocket's closing handshake, and cuts the connection if the other end has not finished it
 * within `graceMs`: `ws` itself waits 30 s, and a peer that stopped reading never answers.
 */
export function closeWithin(socket: WebSocket, code: number, reason: string, graceMs = CLOSE_GRACE_MS): void {
  if (socket.readyState === WebSocket.CLOSED) return;
  if (socket.readyState === WebSocket.OPEN) socket.close(code, reason);
  const timer = setTimeout(() => socket.terminate(), graceMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Above this many bytes waiting to be written to one side, the other side is not read from. */
const HIGH_WATER_MARK = 1024 * 1024;

/**
 * Passes every message from one side to the other, message for message, with backpressure: while the
 * receiving side has more than HIGH_WATER_MARK bytes waiting (a client that reads slowly, say), the
 * sending side is paused, so its TCP window closes instead of Gatehouse's memory filling up. It is
 * resumed once the receiving side has written what it had.
 */
function relay(from: WebSocket, to: WebSocket): void {
  from.on('message', (data, isBinary) => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount <= HIGH_WATER_MARK) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER_MARK) from.pause();
  });
  // A paused side still has to read the other's closing handshake.
  to.once('close', () => from.isPaused && from.resume());
}

/** 1005/1006 are reported, never sent. */
function validCloseCode(code: number): number {
  return code === 1005 || code === 1006 ? 1000 : code;
}
