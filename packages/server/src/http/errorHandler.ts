import { API_PREFIX, pages } from '@gatehouse/contract';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, newReference, toAppError, type ErrorCode } from '../errors.js';
import { errorPage, PAGE_SECURITY_HEADERS } from './html.js';

/** API clients get RFC 9457 problem details; people get a page. */
export function wantsProblemJson(request: FastifyRequest): boolean {
  if (request.url.startsWith(`${API_PREFIX}/`) || request.url === API_PREFIX) return true;
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** Where a person can go next from each error page. */
const retryFor: Partial<Record<ErrorCode, { url: string; label: string }>> = {
  provider_unavailable: { url: pages.signIn.path, label: 'Back to sign-in' },
  provider_misconfigured: { url: pages.signIn.path, label: 'Back to sign-in' },
  sign_in_expired: { url: pages.signIn.path, label: 'Start again' },
  sign_in_denied: { url: pages.signIn.path, label: 'Back to sign-in' },
  sign_in_not_allowed: { url: pages.signIn.path, label: 'Back to sign-in' },
  invalid_response: { url: pages.signIn.path, label: 'Back to sign-in' },
  identity_conflict: { url: pages.signIn.path, label: 'Sign in with your usual provider' },
  csrf_failed: { url: pages.account.path, label: 'Back to your account' },
  not_found: { url: pages.home.path, label: 'Go home' },
  rate_limited: { url: pages.signIn.path, label: 'Back to sign-in' },
  internal: { url: pages.home.path, label: 'Go home' },
  // No dead ends: a suspended person can still go back (another account, perhaps); someone who is not
  // an admin goes back to their apps, or to their account (where they can sign out).
  account_suspended: { url: pages.signIn.path, label: 'Back to sign-in' },
  forbidden: { url: pages.home.path, label: 'Back to your apps' },
};

/** A second way on, beside the first. */
const secondaryFor: Partial<Record<ErrorCode, { url: string; label: string }>> = {
  forbidden: { url: pages.account.path, label: 'Your account' },
};

export function sendError(
  error: AppError,
  request: FastifyRequest,
  reply: FastifyReply,
  format: 'auto' | 'json' | 'html' = 'auto',
): FastifyReply {
  const reference = request.id;
  logError(request.log, error, reference);
  const answer = errorAnswer(error, reference, format === 'json' || (format === 'auto' && wantsProblemJson(request)));
  return reply.status(error.status).headers(answer.headers).send(answer.body);
}

/**
 * The same answer for the hot path, which runs on node:http without Fastify (proxied requests and
 * forward-auth checks): a reference id of its own, logged, and the page or problem+json.
 */
export function sendRawError(error: AppError, request: IncomingMessage, response: ServerResponse, log: FastifyBaseLogger): void {
  const reference = newReference();
  logError(log, error, reference);
  if (response.headersSent) {
    // Part of an upstream's answer is already on its way: all that is left is to cut it short.
    response.destroy();
    return;
  }
  const accept = request.headers.accept ?? '';
  const answer = errorAnswer(error, reference, accept.includes('application/json') && !accept.includes('text/html'));
  response.writeHead(error.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
  response.end(request.method === 'HEAD' ? undefined : answer.body);
}

/**
 * Node's answer to a request its parser refused (malformed, headers over the size limit, too slow to
 * arrive): there is no request to read an Accept header from, so it is problem+json, with the catalogue
 * code and a reference like every other error, written to the socket as Node's own default handler
 * does, and the connection closed. Fastify's `clientErrorHandler`, and the extra listener's too.
 */
export function clientErrorHandler(log: FastifyBaseLogger): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // The peer went away: nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const code: ErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'request_too_large' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'bad_request';
    const answer = rawErrorAnswer(new AppError(code, { cause: error }), log);
    // Only if nothing of a response is on its way already (a pipelined request's answer, say).
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) socket.write(answer);
    socket.destroy(error);
  };
}

/**
 * A refused WebSocket upgrade (no session, a policy that says no, WebSockets off, an upstream that does
 * not answer, anything unexpected) or CONNECT: the catalogue answer as problem+json on the bare socket,
 * which Node hands over without a response object, and the connection closed.
 */
export function refuseUpgrade(socket: Duplex, error: AppError, log: FastifyBaseLogger): void {
  const answer = rawErrorAnswer(error, log);
  if (socket.writable) socket.end(answer);
  else socket.destroy();
}

/** A whole HTTP/1.1 answer with problem+json, for a socket without a response object; logged with its reference. */
function rawErrorAnswer(error: AppError, log: FastifyBaseLogger): string {
  const reference = newReference();
  logError(log, error, reference);
  const { headers, body } = errorAnswer(error, reference, true);
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n${lines.join('')}\r\n${body}`;
}

function logError(log: FastifyBaseLogger, error: AppError, reference: string): void {
  if (error.status >= 500) {
    // A configuration error says what to change (for the operator; the person reads only the sentence).
    log.error({ code: error.code, reference, status: error.status, ...(error.fix ? { fix: error.fix } : {}), err: error.cause ?? error }, error.message);
    return;
  }
  // A refusal (401, 403, 404, ...) is an answer, not a fault: no stack trace, only what led to it.
  const { cause } = error;
  // A refused sign-in says which rule refused (reason, and the admins' sentence) beside its code.
  const logged = {
    code: error.code,
    reference,
    status: error.status,
    ...(error.refusal ? { reason: error.refusal.reason, why: error.refusal.why } : {}),
    ...(cause instanceof Error ? { cause: { type: cause.name, message: cause.message } } : {}),
  };
  if (error.expected) log.debug(logged, error.message);
  else log.info(logged, error.message);
}

function errorAnswer(error: AppError, reference: string, json: boolean): { headers: Record<string, string>; body: string } {
  const headers = { ...error.headers, ...PAGE_SECURITY_HEADERS, 'cache-control': 'no-store' };
  if (json) {
    const problem = {
      type: `urn:gatehouse:error:${error.code}`,
      title: error.title,
      status: error.status,
      detail: error.message,
      code: error.code,
      reference,
      ...(error.field ? { field: error.field } : {}),
    };
    return { headers: { ...headers, 'content-type': 'application/problem+json' }, body: JSON.stringify(problem) };
  }
  const retry = error.retryUrl ? { url: error.retryUrl, label: error.retryLabel ?? 'Start again' } : retryFor[error.code];
  const page = errorPage({ title: error.title, message: error.message, code: error.code, reference, retryUrl: retry?.url, retryLabel: retry?.label, secondary: secondaryFor[error.code] });
  return { headers: { ...headers, 'content-type': 'text/html; charset=utf-8' }, body: page };
}

/**
 * Fastify's `frameworkErrors` option: what its router refuses before any hook or route runs — a path
 * whose percent-encoding does not decode (`/%`, `/%E0%A4%A`, `/api/%zz`), a route parameter over the
 * length limit — gets the catalogue answer (400 bad_request, problem+json under /api and for JSON
 * clients, the error page for people, with a reference), not Fastify's own JSON body. The path is not
 * echoed back.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No hook runs for these (helmet's neither): sendError writes the pages' security headers itself.
  const reason = error.code === 'FST_ERR_BAD_URL' ? 'the address is not validly percent-encoded' : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a part of the address is too long' : undefined;
  sendError(reason ? new AppError('bad_request', { cause: error, params: { reason } }) : toAppError(error), request, reply);
}

/** One place turns every failure into a catalogue answer; no stack trace ever reaches a client. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(toAppError(error), request, reply));
  app.setNotFoundHandler((request, reply) => sendError(new AppError('not_found'), request, reply));
}
