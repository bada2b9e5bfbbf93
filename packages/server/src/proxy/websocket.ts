import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import { checkAccess } from '../authorize/checkAccess.js';
import type { AppConfig } from '../config/schema.js';
import type { Services } from '../services.js';
import { cookieValue } from '../sessions/cookies.js';
import { originOf } from '../authorize/appRegistry.js';
import { AppError } from '../errors.js';
import { refuseUpgrade } from '../http/errorHandler.js';
import { clientAddressOf, forwardedForOf } from '../http/trustedProxies.js';
import { upstreamRequestHeaders } from './upstreamHeaders.js';

/** Close code for "the session that opened this socket ended" (RFC 6455 §7.4.1: policy violation). */
const SESSION_ENDED = 1008;

/**
 * WebSocket upgrades on app hosts: checked exactly like any request (session, policy), then bridged to
 * the upstream with the `ws` library, message for message. Each socket is remembered by its session, so
 * a revocation closes it at once rather than at the next reconnect.
 */
export function webSocketProxy(services: Services, log: FastifyBaseLogger) {
  const server = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  const bySession = new Map<string, Set<WebSocket>>();
  const clientAddress = clientAddressOf(services.config.trustedProxies);
  const forwardedFor = forwardedForOf(services.config.trustedProxies);

  services.sessions.onRevoke((revoked) => {
    for (const session of revoked) {
      for (const socket of bySession.get(session.id) ?? []) socket.close(SESSION_ENDED, 'session ended');
      bySession.delete(session.id);
    }
  });

  const remember = (sessionId: string, socket: WebSocket) => {
    let sockets = bySession.get(sessionId);
    if (!sockets) bySession.set(sessionId, (sockets = new Set()));
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) bySession.delete(sessionId);
    });
  };

  return async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, app: AppConfig): Promise<void> {
    const appOrigin = originOf(app);
    const clientIp = clientAddress(request);
    const context = { log, ip: clientIp, headers: request.headers };
    const token = cookieValue(request.headers.cookie, services.cookies.appSession);
    const result = app.websockets
      ? await checkAccess(services, context, { app, appOrigin, method: 'GET', path: request.url ?? '/', token, preflight: false })
      : undefined;
    if (!result) return refuseUpgrade(socket, new AppError('not_found'), log);
    if (result.kind === 'unauthenticated') return refuseUpgrade(socket, new AppError('unauthenticated'), log);
    if (result.kind === 'denied') {
      return refuseUpgrade(socket, new AppError('access_denied', { params: { email: result.current.user.email, app: app.name } }), log);
    }

    const upstream = new URL(app.upstream);
    upstream.protocol = upstream.protocol === 'https:' ? 'wss:' : 'ws:';
    const target = `${upstream.origin}${upstream.pathname.replace(/\/$/, '')}${request.url ?? '/'}`;
    const headers = upstreamRequestHeaders(request.headers, {
      forwardedFor: forwardedFor(request),
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
        if (result.kind === 'allowed') remember(result.current.session.id, client);
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
