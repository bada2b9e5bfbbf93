import { API_PREFIX, OIDC_PREFIX, oidcEndpoints } from '@gatehouse/contract';
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AccessLog } from './accessLog.js';
import type { Area, Decision, Metrics } from './metrics.js';

/**
 * One request as metrics and the access log see it, from its arrival to the end of its answer. The
 * dispatcher begins it (proxy/hotPath.ts); whoever knows more fills it in: the hot path the area,
 * the app and the decision, the forwarder the upstream's time, the portal's areas what they learn
 * (`RequestNotes`). Read once, when the answer is done.
 */
export interface Exchange {
  /** performance.now() at arrival. */
  readonly start: number;
  /** The request id, as the access log and Fastify's log (reqId) give it; "" without an access log. */
  readonly id: string;
  area: Area | undefined;
  /** The app's id ("" when none, or when the one a client named does not exist). */
  app: string;
  decision: Decision | undefined;
  rule: string | undefined;
  user: { id: string; email: string } | undefined;
  /** For forward-auth: the original request the proxy asked about (method, host, target). */
  original: { method: string; host: string; target: string } | undefined;
  /** How long the upstream took to begin answering (ms). */
  upstreamMs: number | undefined;
  /** Open, followed to its close, or recorded: recorded once, whichever way it ends. */
  state: 'open' | 'followed' | 'recorded';
}

/**
 * Watches requests for metrics and the access log. Only made when one of them is on (`requestObserver`
 * answers undefined otherwise), so with both off the hot path pays one test per request.
 */
export interface RequestObserver {
  /** A request arrived: its exchange, open until it is followed or finished. */
  begin(): Exchange;
  /**
   * The request goes on elsewhere (Fastify, the upstream): `of` finds its exchange, recorded when the
   * response closes. Once only; a no-op for an exchange already followed or recorded.
   */
  follow(request: IncomingMessage, response: ServerResponse, exchange: Exchange): void;
  /**
   * The answer was written in full just now (the hot path's own empty answers): recorded at once, with
   * no map entry or close listener for the request. A no-op for an exchange already recorded.
   */
  finish(request: IncomingMessage, response: ServerResponse, exchange: Exchange): void;
  /** The exchange of a request followed here, if any. */
  of(request: IncomingMessage): Exchange | undefined;
  /** Access was decided: counted, and kept for the access log. */
  decided(exchange: Exchange, decision: Decision, rule: string, user: Exchange['user']): void;
}

/** How the exchange's app label is given when the request names no (known) app. */
export const NO_APP = '';

export function requestObserver(metrics: Metrics, accessLog: AccessLog | undefined): RequestObserver | undefined {
  if (!metrics.enabled && !accessLog) return undefined;
  const exchanges = new WeakMap<IncomingMessage, Exchange>();
  const nextId = accessLog ? requestIds() : () => '';

  function finish(request: IncomingMessage, response: ServerResponse, exchange: Exchange): void {
    if (exchange.state === 'recorded') return;
    exchange.state = 'recorded';
    const totalMs = performance.now() - exchange.start;
    // No answer was sent when the client went away first: "other" in the status class.
    const status = response.headersSent ? response.statusCode : 0;
    const area = exchange.area ?? portalArea(request.url);
    metrics.request(area, exchange.app, status, totalMs / 1000);
    // Every request has its line: the portal's pages, its API and the OpenID Provider too.
    if (accessLog) {
      const { original } = exchange;
      accessLog.write({
        id: exchange.id,
        area,
        method: original?.method ?? request.method ?? '',
        host: original?.host ?? request.headers.host ?? '',
        target: original?.target ?? request.url ?? '',
        user: exchange.user,
        app: exchange.app,
        decision: exchange.decision,
        rule: exchange.rule,
        status,
        upstreamMs: exchange.upstreamMs,
        totalMs,
      });
    }
  }

  return {
    begin() {
      return {
        start: performance.now(),
        id: nextId(),
        area: undefined,
        app: NO_APP,
        decision: undefined,
        rule: undefined,
        user: undefined,
        original: undefined,
        upstreamMs: undefined,
        state: 'open',
      };
    },
    follow(request, response, exchange) {
      if (exchange.state !== 'open') return;
      exchange.state = 'followed';
      exchanges.set(request, exchange);
      response.once('close', () => finish(request, response, exchange));
    },
    finish,
    of: (request) => exchanges.get(request),
    decided(exchange, decision, rule, user) {
      exchange.decision = decision;
      exchange.rule = rule;
      exchange.user = user;
      metrics.decision(exchange.area ?? 'portal', exchange.app, decision, rule);
    },
  };
}

/** Whether `url` is `prefix` itself or below it (`/api`, `/api/…`, `/api?…`; not `/apiary`). */
const under = (url: string, prefix: string) => url.startsWith(prefix) && (url.length === prefix.length || '/?'.includes(url[prefix.length]!));

/**
 * The area of a request the portal answers, by its target: the JSON API, the OpenID Provider (its
 * addresses under /oidc, the login step included, and its discovery document), or the portal's pages.
 */
export function portalArea(url: string | undefined): Area {
  if (url === undefined) return 'portal';
  if (under(url, API_PREFIX)) return 'api';
  return under(url, OIDC_PREFIX) || under(url, oidcEndpoints.discovery) ? 'oidc' : 'portal';
}

/**
 * What the portal's areas tell metrics and the access log of a request they answer, as they learn it:
 * whose Gatehouse session it was answered with (sessions/), the app it concerned and the access
 * decision made for it (provide/: an OpenID Provider request's client and the app's policy). Each is a
 * no-op for a request nobody observes (metrics and the access log both off).
 */
export interface RequestNotes {
  /** The request was answered with this person's Gatehouse session. */
  user(request: IncomingMessage, user: { id: string; email: string }): void;
  /** The request concerned this app (an id of the configuration, never a value a client chose). */
  app(request: IncomingMessage, appId: string): void;
  /** Access to `app` was decided for this request: counted, and kept for the access log. */
  decided(request: IncomingMessage, app: string, decision: Decision, rule: string, user: Exchange['user']): void;
}

export const NO_NOTES: RequestNotes = { user() {}, app() {}, decided() {} };

/** The notes of an observer's requests (those it follows: every request Fastify answers). */
export function requestNotes(observer: RequestObserver | undefined): RequestNotes {
  if (!observer) return NO_NOTES;
  return {
    user(request, user) {
      const exchange = observer.of(request);
      // The decision's person, when one was made, is the one it was made for.
      if (exchange && !exchange.user) exchange.user = user;
    },
    app(request, appId) {
      const exchange = observer.of(request);
      if (exchange) exchange.app = appId;
    },
    decided(request, app, decision, rule, user) {
      const exchange = observer.of(request);
      if (!exchange) return;
      // The area the decision is counted in: the portal's requests have theirs from their target.
      exchange.area ??= portalArea(request.url);
      exchange.app = app;
      observer.decided(exchange, decision, rule, user ?? exchange.user);
    },
  };
}

/**
 * Request ids like the error references people see (errors.ts newReference: 12 hex digits, random),
 * drawn from a pool of random bytes filled 1,024 ids at a time rather than one system call each.
 */
function requestIds(): () => string {
  const pool = Buffer.alloc(6 * 1024);
  let offset = pool.length;
  return () => {
    if (offset === pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    const id = pool.toString('hex', offset, offset + 6);
    offset += 6;
    return id;
  };
}
