import { endpoints } from '@gatehouse/contract';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessResult } from '../authorize/checkAccess.js';
import { isBrowserNavigation } from './forwardAuth.js';
import type { AppConfig, Config } from '../config/schema.js';
import { PAGE_SECURITY_HEADERS } from '../http/html.js';
import { clientAddressOf, forwardedForOf } from '../http/trustedProxies.js';
import type { UpstreamForwarder } from './forwarder.js';

/**
 * Answers a request for an app once its access is decided, when the answer needs no page: an allowed
 * (or public) request is forwarded upstream, a signed-out browser's navigation is sent to the handshake
 * to sign in. Anything else (the 401 problem, the 403 page) is left to the app-host instance: false.
 */
export type ProxiedAnswer = (request: IncomingMessage, response: ServerResponse, app: AppConfig, appOrigin: string, result: AccessResult) => boolean;

/**
 * The one writer of the proxy's answer, used by the hot path and by the app-host instance alike, so the
 * two can never answer one decision differently. Built once: it allocates nothing beyond what
 * forwarding takes.
 */
export function proxiedAnswer(forwarder: UpstreamForwarder, trustedProxies: Config['trustedProxies']): ProxiedAnswer {
  // Who the upstream is told the request came from (X-Forwarded-For, X-Real-IP), past trusted proxies.
  const forwardedFor = forwardedForOf(trustedProxies);
  const clientAddress = clientAddressOf(trustedProxies);
  return function answer(request, response, app, appOrigin, result) {
    if (result.kind === 'public' || result.kind === 'allowed') {
      forwarder.forward(request, response, { app, appOrigin, result, forwardedFor: forwardedFor(request), clientAddress: clientAddress(request) ?? '' });
      return true;
    }
    if (result.kind === 'unauthenticated' && isBrowserNavigation(request.method ?? 'GET', request.headers.accept)) {
      const start = `${endpoints.appStart}?rd=${encodeURIComponent(`${appOrigin}${request.url}`)}`;
      response.writeHead(302, Object.assign({ location: start, 'cache-control': 'no-store', 'content-length': 0 }, PAGE_SECURITY_HEADERS)).end();
      return true;
    }
    return false;
  };
}
