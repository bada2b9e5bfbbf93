import { RESERVED_PREFIX } from '@gatehouse/contract';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { originOf, type AppRegistry } from '../apps/appRegistry.js';
import { checkAccess, checkAccessNow, type AccessRequest, type AccessResult } from '../authorize/checkAccess.js';
import { ruleLabel } from '../authorize/policy.js';
import {
  forwardAuthCheck,
  forwardAuthEndpoint,
  type ForwardAuthAnswer,
  type ForwardAuthDeps,
  type ForwardAuthMode,
} from './forwardAuth.js';
import type { AppConfig } from '../config/schema.js';
import { AppError, toAppError } from '../errors.js';
import { sendRawError } from '../http/errorHandler.js';
import { hostHeaderProblem } from '../http/hostHeader.js';
import { PAGE_SECURITY_HEADERS } from '../http/html.js';
import type { Decision } from '../operations/metrics.js';
import { NO_APP, type Exchange, type RequestObserver } from '../operations/observe.js';
import { clientAddressOf } from '../http/trustedProxies.js';
import { cookieValue } from '../sessions/cookies.js';
import type { ResolveContext } from '../sessions/sessionResolver.js';
import type { ProxiedAnswer } from './proxiedAnswer.js';

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** What the hot path takes: forward-auth's and the access check's, and the apps by host. */
export interface HotPathDeps extends ForwardAuthDeps {
  apps: Pick<AppRegistry, 'guarded' | 'forHost'>;
}

const SLASH = 0x2f;
const NOT_A_PATH = 'the request target must be a path: Gatehouse is not a forward proxy';
/**
 * RFC 9112 §3.2: a request target has no fragment. Servers disagree on what a raw "#" means (the end of
 * the path, or a character of it), so a target with one is refused rather than judged one way and
 * read another way upstream.
 */
const A_FRAGMENT = 'the request target must not contain "#"';

/**
 * What makes a request unfit to route, if anything: a missing or repeated Host (http/hostHeader.ts), or
 * a target that is not a path (origin-form) or has a "#". An absolute URL would be routed by the Host header and
 * checked against that app's policy, yet sent on as it is; an upstream that serves several hosts reads
 * the host in the URL (RFC 9112 §3.2.2), and would answer for an app whose policy was never checked.
 * Asked first of every request, plain or upgrade.
 */
export function requestProblem(request: IncomingMessage): string | undefined {
  const url = request.url ?? '/';
  return hostHeaderProblem(request) ?? (url.charCodeAt(0) !== SLASH ? NOT_A_PATH : url.includes('#') ? A_FRAGMENT : undefined);
}

/**
 * A forward-auth answer's headers: the identity headers plus no-store and an empty body. Built once per
 * set of identity headers (those are reused per session and app), not once per request.
 */
const answerHeaders = new WeakMap<Record<string, string>, Record<string, string | number>>();
function emptyAnswerHeaders(identity: Record<string, string>): Record<string, string | number> {
  let headers = answerHeaders.get(identity);
  if (!headers) {
    headers = Object.assign({ 'cache-control': 'no-store', 'content-length': 0 }, identity);
    answerHeaders.set(identity, headers);
  }
  return headers;
}

export interface HotPathOptions {
  deps: HotPathDeps;
  /** Forwards an allowed request, or redirects a signed-out navigation (proxy/proxiedAnswer.ts). */
  answer: ProxiedAnswer;
  log: FastifyBaseLogger;
  /** The portal's Fastify instance. */
  portal: Handler;
  /** The app hosts' Fastify instance (handshake, pages, errors). */
  appHost: Handler;
  /** Metrics and the access log, when either is on. */
  observer?: RequestObserver | undefined;
}

/** What metrics and the access log say of a decision: its name, the rule that made it, and whose it was. */
export function describeDecision(result: AccessResult): { decision: Decision; rule: string; user: Exchange['user'] } {
  if (result.kind === 'allowed' || result.kind === 'denied') {
    return { decision: result.kind, rule: ruleLabel(result.decision.decidedBy), user: { id: result.current.user.id, email: result.current.user.email } };
  }
  if (result.kind === 'public') return { decision: 'public', rule: 'public', user: undefined };
  return { decision: result.kind, rule: 'none', user: undefined };
}

export function recordDecision(observer: RequestObserver, exchange: Exchange, result: AccessResult): void {
  const { decision, rule, user } = describeDecision(result);
  observer.decided(exchange, decision, rule, user);
}

/**
 * The two requests Gatehouse answers most — a proxied request to an allowed app, and a forward-auth
 * check — on node:http directly, without a framework's per-request work (request objects, hooks,
 * loggers, request ids). The decisions are the very ones the Fastify routes make (checkAccess,
 * forwardAuthCheck); only the answers that need no page are written here. Everything else — a
 * signed-out or refused request, Gatehouse's own endpoints, anything unusual — goes to the Fastify
 * instances, which answer it in full.
 */
export function hotPath({ deps, answer, log, portal, appHost, observer }: HotPathOptions): Handler {
  const { apps, cookies } = deps;
  const clientAddress = clientAddressOf(deps.running.current.trustedProxies);
  const checker = forwardAuthCheck(deps, log);

  const contextOf = (request: IncomingMessage): ResolveContext => ({
    log,
    headers: request.headers,
    // Only the audit log and the claims refresher read the address, and only now and then.
    get ip() {
      return clientAddress(request);
    },
  });

  function proxy(request: IncomingMessage, response: ServerResponse, app: AppConfig, exchange: Exchange | undefined): Promise<void> | undefined {
    const appOrigin = originOf(app);
    const method = request.method ?? 'GET';
    const access: AccessRequest = {
      app,
      appOrigin,
      method,
      path: request.url!,
      token: cookieValue(request.headers.cookie, cookies.appSession),
      preflight: Boolean(request.headers.origin && request.headers['access-control-request-method']),
    };
    // Most requests are decided without waiting; only then is the answer written in this very turn.
    const now = checkAccessNow(deps, access);
    if (now) return answerProxied(request, response, app, appOrigin, now, exchange);
    return checkAccess(deps, contextOf(request), access).then((result) => answerProxied(request, response, app, appOrigin, result, exchange));
  }

  function answerProxied(request: IncomingMessage, response: ServerResponse, app: AppConfig, appOrigin: string, result: AccessResult, exchange: Exchange | undefined): undefined {
    if (exchange) {
      recordDecision(observer!, exchange, result);
      // Its answer comes from the upstream or the app host: recorded when the response closes.
      observer!.follow(request, response, exchange);
    }
    if (!answer(request, response, app, appOrigin, result)) appHost(request, response);
    return undefined;
  }

  /** Where a request the hot path does not answer goes: the app-host instance for an app's host, else the portal. */
  const fallback = (request: IncomingMessage): Handler => (apps.forHost(request.headers.host) ? appHost : portal);

  function forwardAuth(request: IncomingMessage, response: ServerResponse, mode: ForwardAuthMode, appId: string | undefined, exchange: Exchange | undefined): Promise<void> | undefined {
    const asked = { mode, appId, remoteAddress: request.socket.remoteAddress, headers: request.headers };
    const now = checker.now(asked);
    if (now) return answerForwardAuth(request, response, now, exchange);
    return checker.check({ ...asked, context: contextOf(request) }).then((answer) => answerForwardAuth(request, response, answer, exchange));
  }

  function answerForwardAuth(request: IncomingMessage, response: ServerResponse, answer: ForwardAuthAnswer, exchange: Exchange | undefined): undefined {
    if (exchange) {
      const { judged } = answer;
      if (judged) {
        const { method, host, uri } = judged.original;
        exchange.original = { method, host, target: uri };
        recordDecision(observer!, exchange, judged.result);
      } else observer!.decided(exchange, 'refused', 'none', undefined);
    }
    if (answer.kind === 'denied-page') return leave(request, response, fallback(request), exchange);
    if (answer.kind === 'redirect') {
      response.writeHead(302, Object.assign({ location: answer.location, 'cache-control': 'no-store', 'content-length': 0 }, PAGE_SECURITY_HEADERS, answer.headers)).end();
    } else {
      response.writeHead(answer.status, emptyAnswerHeaders(answer.headers)).end();
    }
    // Written in full here: recorded now, with nothing kept per request until it closes.
    if (exchange) observer!.finish(request, response, exchange);
    return undefined;
  }

  /** Hands the request to a Fastify instance; its exchange, if any, is recorded when the response closes. */
  function leave(request: IncomingMessage, response: ServerResponse, handler: Handler, exchange: Exchange | undefined): undefined {
    if (exchange) observer!.follow(request, response, exchange);
    handler(request, response);
    return undefined;
  }

  function failed(request: IncomingMessage, response: ServerResponse, error: unknown, exchange: Exchange | undefined): void {
    if (exchange) observer!.follow(request, response, exchange);
    sendRawError(toAppError(error), request, response, log);
  }

  return function dispatch(request, response) {
    const url = request.url ?? '/';
    const exchange = observer?.begin();
    let waiting: Promise<void> | undefined;
    try {
      const problem = requestProblem(request);
      if (problem) throw new AppError('bad_request', { params: { reason: problem } });
      if (url.startsWith(RESERVED_PREFIX)) {
        // Forward-auth is asked on whatever host the proxy uses for Gatehouse: no app lookup first.
        const endpoint = forwardAuthEndpoint(url);
        if (endpoint && exchange) {
          exchange.area = 'forward_auth';
          // Only an app that exists is a label: a client may name any id it likes.
          exchange.app = endpoint.appId !== undefined && apps.guarded(endpoint.appId) ? endpoint.appId : NO_APP;
        }
        if (!endpoint || (request.method !== 'GET' && request.method !== 'HEAD')) return leave(request, response, fallback(request), exchange);
        waiting = forwardAuth(request, response, endpoint.mode, endpoint.appId, exchange);
      } else {
        const app = apps.forHost(request.headers.host);
        if (!app) return leave(request, response, portal, exchange);
        if (exchange) {
          exchange.area = 'proxy';
          exchange.app = app.id;
        }
        waiting = proxy(request, response, app, exchange);
      }
    } catch (error) {
      return failed(request, response, error, exchange);
    }
    waiting?.catch((error: unknown) => failed(request, response, error, exchange));
  };
}
