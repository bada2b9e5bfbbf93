import type { Access } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { CurrentSession } from './sessionResolver.js';

/**
 * How a host knows who is calling and whether a change is really theirs: on the portal, the portal
 * session and its CSRF token under the portal's Origin; on an app host, the app session and its own.
 */
export interface GuardDeps {
  /** The session the request runs under, if any. */
  sessionOf(request: FastifyRequest): Promise<CurrentSession | undefined>;
  /** Whether a state-changing request carries the exact Origin and the session-bound token. */
  csrfValid(request: FastifyRequest, current: CurrentSession): boolean;
  isAdmin(current: CurrentSession): boolean;
  /** Why a request without a live session has none, when its cookie names a session Gatehouse ended itself (sessionEnded.ts). */
  signedOutWhy?(request: FastifyRequest): Promise<AppError | undefined>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; the guard enforces it before anything else runs. */
    access?: Access;
    /**
     * The CSRF proof of a state-changing request: in the `X-CSRF-Token` header (the JSON API, checked
     * with the session), or in the `csrf_token` field of an HTML form (checked once the body is read).
     */
    csrf?: 'header' | 'form';
    /**
     * A page or form a person reaches: instead of a 401, what a signed-out browser is answered with.
     * `ended` says why, when Gatehouse itself ended the session the cookie names (read only if asked).
     */
    whenSignedOut?: (request: FastifyRequest, reply: FastifyReply, ended: () => Promise<AppError | undefined>) => FastifyReply | Promise<FastifyReply>;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request can change state and so needs CSRF proof. */
export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method);
}

/**
 * The one guard of Gatehouse's routes, on the portal and on each app host. Each route declares who may
 * call it (`config.access`: public, session, admin; the contract's routes take it from their
 * definition) and this hook enforces it before anything else runs — before the body is validated, so
 * a stranger learns nothing from a 400:
 * - no session: 401 `unauthenticated` (`session_ended` with why, when Gatehouse ended the session its
 *   cookie names), or the route's own answer for people (`whenSignedOut`);
 * - `admin` and not one: 403 `forbidden`;
 * - a state-changing method: the host's exact Origin and the session-bound CSRF token, or 403
 *   `csrf_failed` — from the `X-CSRF-Token` header at once, or (HTML forms) from the `csrf_token` field
 *   as soon as the body is read, still before the handler.
 */
export function installGuard(app: FastifyInstance, deps: GuardDeps): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const { access = 'public', csrf = 'header', whenSignedOut } = request.routeOptions.config;
    if (access === 'public') return;
    const current = await deps.sessionOf(request);
    if (!current) {
      const ended = async () => deps.signedOutWhy?.(request);
      if (whenSignedOut) return whenSignedOut(request, reply, ended);
      throw (await ended()) ?? new AppError('unauthenticated');
    }
    guarded.set(request, current);
    if (access === 'admin' && !deps.isAdmin(current)) throw new AppError('forbidden');
    if (csrf === 'header' && isStateChanging(request.method) && !deps.csrfValid(request, current)) throw new AppError('csrf_failed');
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    const { access = 'public', csrf = 'header' } = request.routeOptions.config;
    if (access === 'public' || csrf !== 'form' || !isStateChanging(request.method)) return;
    const current = guarded.get(request);
    if (!current || !deps.csrfValid(request, current)) throw new AppError('csrf_failed');
  });
}

/** The session each guarded request runs under, as the guard found it. */
const guarded = new WeakMap<FastifyRequest, CurrentSession>();

/** The session a guarded route runs under (the guard has checked there is one). */
export async function signedIn(request: FastifyRequest): Promise<CurrentSession> {
  const current = guarded.get(request);
  if (!current) throw new AppError('unauthenticated');
  return current;
}
