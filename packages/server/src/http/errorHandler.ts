import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, toAppError, type ErrorCode } from '../errors.js';
import { paths } from '../paths.js';
import { errorPage } from './html.js';

/** API clients get RFC 9457 problem details; people get a page. */
export function wantsProblemJson(request: FastifyRequest): boolean {
  if (request.url.startsWith(`${paths.api.prefix}/`) || request.url === paths.api.prefix) return true;
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** Where a person can go next from each error page. */
const retryFor: Partial<Record<ErrorCode, { url: string; label: string }>> = {
  provider_unavailable: { url: paths.pages.signIn, label: 'Back to sign-in' },
  sign_in_expired: { url: paths.pages.signIn, label: 'Start again' },
  sign_in_denied: { url: paths.pages.signIn, label: 'Back to sign-in' },
  sign_in_not_allowed: { url: paths.pages.signIn, label: 'Back to sign-in' },
  invalid_response: { url: paths.pages.signIn, label: 'Back to sign-in' },
  identity_conflict: { url: paths.pages.signIn, label: 'Sign in with your usual provider' },
  csrf_failed: { url: paths.pages.account, label: 'Back to your account' },
  not_found: { url: paths.pages.home, label: 'Go home' },
  rate_limited: { url: paths.pages.signIn, label: 'Back to sign-in' },
  internal: { url: paths.pages.home, label: 'Go home' },
};

export function sendError(
  error: AppError,
  request: FastifyRequest,
  reply: FastifyReply,
  format: 'auto' | 'json' | 'html' = 'auto',
): FastifyReply {
  const reference = request.id;
  const logged = { code: error.code, reference, status: error.status, err: error.cause ?? error };
  if (error.status >= 500) request.log.error(logged, error.message);
  else request.log.info(logged, error.message);

  reply.status(error.status).headers(error.headers).header('cache-control', 'no-store');
  if (format === 'json' || (format === 'auto' && wantsProblemJson(request))) {
    return reply.type('application/problem+json').send({
      type: `urn:gatehouse:error:${error.code}`,
      title: error.title,
      status: error.status,
      detail: error.message,
      code: error.code,
      reference,
    });
  }
  const retry = error.retryUrl ? { url: error.retryUrl, label: 'Start again' } : retryFor[error.code];
  return reply.type('text/html; charset=utf-8').send(
    errorPage({ title: error.title, message: error.message, code: error.code, reference, retryUrl: retry?.url, retryLabel: retry?.label }),
  );
}

/** One place turns every failure into a catalogue answer; no stack trace ever reaches a client. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(toAppError(error), request, reply));
  app.setNotFoundHandler((request, reply) => sendError(new AppError('not_found'), request, reply));
}
