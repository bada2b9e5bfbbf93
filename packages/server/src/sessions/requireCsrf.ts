import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Secrets } from '../secrets.js';
import type { CurrentSession } from './sessionResolver.js';
import { isValidCsrf } from './csrf.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request can change state and so needs CSRF proof. */
export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method);
}

/**
 * preHandler for API scopes: every request needs a session, and every state-changing one the exact
 * Origin plus the session-bound CSRF token (header X-CSRF-Token).
 */
export function requireSession(services: { portalOrigin: string; secrets: Pick<Secrets, 'cookieKey'> }) {
  return async function (request: FastifyRequest): Promise<void> {
    const current = await request.currentSession();
    if (!current) throw new AppError('unauthenticated');
    if (isStateChanging(request.method) && !isValidCsrf(request, services.portalOrigin, services.secrets.cookieKey, current.session)) {
      throw new AppError('csrf_failed');
    }
  };
}

/** The session a requireSession-guarded handler runs under. */
export async function sessionOf(request: FastifyRequest): Promise<CurrentSession> {
  const current = await request.currentSession();
  if (!current) throw new AppError('unauthenticated');
  return current;
}
