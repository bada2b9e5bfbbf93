import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { Pool } from 'undici';
import type { AccessResult } from '../authorize/checkAccess.js';
import type { AppConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import { sendRawError } from '../http/errorHandler.js';
import { NO_METRICS, type Metrics } from '../operations/metrics.js';
import type { RequestObserver } from '../operations/observe.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { LiveAccess } from './liveAccess.js';
import { compressedHeaders, compressionFor, compressor, varyOnCompression, WHOLE_LIMIT, WholeAnswer } from './compression.js';
import { downstreamResponseHeaders, upstreamRequestHeaders } from './upstreamHeaders.js';

export interface ForwardTarget {
  app: AppConfig;
  appOrigin: string;
  /** What checkAccess decided: only 'public' and 'allowed' are forwarded. */
  result: Extract<AccessResult, { kind: 'public' | 'allowed' }>;
  /** The X-Forwarded-For to send (http/trustedProxies.ts, forwardedForOf). */
  forwardedFor: string;
  /** The client's address past trusted proxies (http/trustedProxies.ts, clientAddressOf): X-Real-IP. */
  clientAddress: string;
}

interface Upstream {
  pool: Pool;
  /** The upstream URL's path without its trailing slash, prefixed to every request path. */
  basePath: string;
}

/**
 * Streams an allowed request to its app's upstream and the answer back, on undici's connection pool
 * (one per upstream origin, kept alive): bodies flow through in both directions without buffering.
 * This is the proxy's hot path, so it works on node:http's request and response directly.
 */
export class UpstreamForwarder {
  private readonly upstreams = new Map<string, Upstream>();

  constructor(
    private readonly sessions: Pick<SessionStore, 'accessToken'>,
    private readonly log: FastifyBaseLogger,
    /** Where answers that may last are kept to their access while they do (none: not kept). */
    private readonly live?: LiveAccess,
    /** Upstream times and errors by app, and the request's exchange for the access log. */
    private readonly metrics: Metrics = NO_METRICS,
    private readonly observer?: RequestObserver,
  ) {}

  forward(request: IncomingMessage, response: ServerResponse, target: ForwardTarget): void {
    const { app, appOrigin, result } = target;
    const upstream = this.upstreamFor(app);
    // An app its own proxy serves (forward-auth only): nowhere to forward to, whoever asks.
    if (!upstream) return sendRawError(new AppError('no_upstream', { params: { app: app.name } }), request, response, this.log);
    const { pool, basePath } = upstream;
    const headers = upstreamRequestHeaders(request.headers, {
      forwardedFor: target.forwardedFor,
      clientAddress: target.clientAddress,
      publicOrigin: appOrigin,
      preserveHost: app.preserveHost,
      identity: result.kind === 'allowed' ? result.headers : undefined,
    });
    if (app.passAccessToken.length > 0) {
      // Only Gatehouse's own token for the user, never one the client brought along, and only from a
      // provider this app names: a token is a credential for that provider's APIs (GitHub's never
      // expire), not for every app the person opens.
      const session = result.kind === 'allowed' ? result.current.session : undefined;
      const accessToken = session && app.passAccessToken.includes(session.provider_id) ? this.sessions.accessToken(session) : undefined;
      if (accessToken) headers.authorization = `Bearer ${accessToken}`;
      else delete headers.authorization;
    }
    const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
    const exchange = this.observer?.of(request);
    const asked = this.metrics.enabled || exchange ? performance.now() : 0;
    pool.stream(
      {
        method: request.method as 'GET',
        path: `${basePath}${request.url ?? '/'}`,
        headers,
        body: hasBody ? request : null,
        // The client's own connection decides how long an answer may take; undici's defaults stand.
      },
      ({ statusCode, headers: upstreamHeaders }) => {
        if (asked !== 0) {
          const upstreamMs = performance.now() - asked;
          if (exchange) exchange.upstreamMs = upstreamMs;
          this.metrics.upstream(app.id, upstreamMs / 1000);
        }
        // Only for an app whose operator turned it on, and only for same-origin requests (compression.ts: BREACH).
        const compression = app.compress ? compressionFor(request, statusCode, upstreamHeaders) : undefined;
        const encoding = compression?.encoding;
        const headers = downstreamResponseHeaders(upstreamHeaders);
        if (compression && !encoding) varyOnCompression(headers);
        const length = upstreamHeaders['content-length'] === undefined ? undefined : Number(upstreamHeaders['content-length']);
        if (encoding && length !== undefined && length <= WHOLE_LIMIT) return new WholeAnswer(response, statusCode, headers, encoding, length);
        response.writeHead(statusCode, encoding ? compressedHeaders(headers, encoding) : headers);
        // An answer of unknown length may last (an event stream, a long poll): it answers to its access
        // while it does, so a revocation ends it rather than leave it streaming. One check for the rest.
        if (length === undefined && this.live && hasContent(request.method, statusCode)) this.keepToAccess(request, response, target);
        if (!encoding) return response;
        const compressing = compressor(encoding, length);
        // A client that goes away destroys the compressor too, and undici then stops reading the upstream.
        pipeline(compressing, response, () => {});
        return compressing;
      },
      (error) => {
        if (!error) return;
        // The client went away first (the request body failing is no reason: undici ends it on errors).
        if (response.writableEnded || !response.socket || response.socket.destroyed) return;
        this.metrics.upstreamError(app.id);
        // Logged once, at error, with the cause and the reference the person is shown.
        sendRawError(new AppError('upstream_unavailable', { params: { app: app.name }, cause: error }), request, response, this.log);
      },
    );
  }

  private keepToAccess(request: IncomingMessage, response: ServerResponse, { app, result }: ForwardTarget): void {
    const sessionId = result.kind === 'allowed' ? result.current.session.id : undefined;
    const access = this.live!.accessOf(request, response.socket?.remoteAddress);
    const untrack = this.live!.track({ app, path: request.url ?? '/', ...access, sessionId, kind: 'stream' }, () => response.destroy());
    response.once('close', untrack);
  }

  /**
   * Closes the pools of upstreams not in `upstreams` (apps were deleted or moved): each finishes the
   * requests it has in flight, then lets its connections go. A later request opens a fresh pool.
   */
  retain(upstreams: ReadonlySet<string>): void {
    for (const [url, { pool }] of this.upstreams) {
      if (upstreams.has(url)) continue;
      this.upstreams.delete(url);
      pool.close().catch((error: unknown) => this.log.warn({ err: error, upstream: url }, 'closing an upstream pool failed'));
    }
  }

  /** How many upstream pools are open. */
  get size(): number {
    return this.upstreams.size;
  }

  async close(): Promise<void> {
    const pools = [...this.upstreams.values()].map(({ pool }) => pool.close());
    this.upstreams.clear();
    await Promise.allSettled(pools);
  }

  private upstreamFor(app: AppConfig): Upstream | undefined {
    if (app.upstream === undefined) return undefined;
    let upstream = this.upstreams.get(app.upstream);
    if (!upstream) {
      const url = new URL(app.upstream);
      upstream = {
        pool: new Pool(url.origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 }),
        basePath: url.pathname.replace(/\/$/, ''),
      };
      this.upstreams.set(app.upstream, upstream);
    }
    return upstream;
  }
}

/** Whether an answer to this method with this status has content at all (RFC 9110 §6.4.1). */
function hasContent(method: string | undefined, status: number): boolean {
  return method !== 'HEAD' && status !== 204 && status !== 304;
}
