import { AsyncLocalStorage } from 'node:async_hooks';
import { OIDC_PREFIX, oidcEndpoints } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { asIssuerSees } from './forwarded.js';
import { TOO_MANY_FAILURES, type ClientAuthLimit } from './clientAuthLimit.js';
import { OP_ANSWER_HEADERS } from './pages.js';

/** The request oidc-provider is answering, for its hooks (findAccount, the checks), which see only Koa's context. */
export const requests = new AsyncLocalStorage<FastifyRequest>();

export interface MountDeps {
  /** The provider in force: read at each request, so a rebuilt one (new keys) answers the next. */
  provider(): Provider;
  portalOrigin: string;
  clientAuthLimit: ClientAuthLimit;
  /** The portal is served over https: its answers carry Strict-Transport-Security, as helmet's do. */
  strictTransportSecurity: boolean;
}

const METHODS = ['GET', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'];

/**
 * Hands the OpenID Provider's addresses (discovery, everything under /oidc/ but the login step) to
 * oidc-provider, before Fastify reads any body: its own parsers read form posts and JSON as the
 * specifications define them. Fastify's global hooks have run by then (the Host check, the request
 * id), and the answer is oidc-provider's, written to the raw response with the security headers of
 * the OP's answers (pages.ts). Helmet does not run on these routes: every header it would set is one
 * the OP's answers set themselves, or replace (its CSP), and @fastify/helmet builds its middleware anew
 * on every request (about 6 µs, on the token endpoint's path).
 */
export function mountProvider(app: FastifyInstance, deps: MountDeps): void {
  // Koa's callback() composes the middleware anew at each call: once per provider is enough (a rebuilt
  // provider, new keys, gets its own at its first request).
  const callbacks = new WeakMap<Provider, ReturnType<Provider['callback']>>();
  const callbackOf = (provider: Provider) => {
    let callback = callbacks.get(provider);
    if (!callback) callbacks.set(provider, (callback = provider.callback()));
    return callback;
  };
  const headers = Object.entries(opAnswerHeaders(deps.strictTransportSecurity));
  const hand = async (request: FastifyRequest, reply: FastifyReply) => {
    // Threat: guessing a client's secret at the token endpoint. A client address that failed client
    // authentication too often is answered 429 before oidc-provider reads anything: from this process's
    // memory, so that no request waits for Redis or the primary here (provide/clientAuthLimit.ts).
    const retryAfter = deps.clientAuthLimit.blocked(request.ip);
    if (retryAfter !== undefined) {
      for (const [name, value] of headers) reply.header(name, value);
      return reply
        .code(429)
        .header('retry-after', String(retryAfter))
        .header('cache-control', 'no-store')
        .type('application/json')
        .send(TOO_MANY_FAILURES);
    }
    reply.hijack();
    // oidc-provider's answers are not the portal's pages: headers of their own (pages.ts).
    for (const [name, value] of headers) reply.raw.setHeader(name, value);
    asIssuerSees(request, deps.portalOrigin);
    const callback = callbackOf(deps.provider());
    await requests.run(request, () => callback(request.raw, reply.raw));
    return reply;
  };
  const unreachable = async () => undefined;
  app.route({ method: METHODS, url: `${OIDC_PREFIX}/*`, helmet: false, onRequest: hand, handler: unreachable });
  app.route({ method: ['GET', 'OPTIONS'], url: oidcEndpoints.discovery, helmet: false, onRequest: hand, handler: unreachable });
}

/**
 * Every header of the OP's answers: those of pages.ts, with what helmet would add to them that still
 * means something here (HSTS on https; a browsing context group and an agent cluster of their own for
 * the form_post and logout pages), set once per answer from one frozen list.
 */
export function opAnswerHeaders(strictTransportSecurity: boolean): Readonly<Record<string, string>> {
  return Object.freeze({
    ...OP_ANSWER_HEADERS,
    'cross-origin-opener-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    ...(strictTransportSecurity ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  });
}
