import type { FastifyBaseLogger } from 'fastify';
import type { RequestContext } from '../audit/auditLog.js';
import type { Identity } from '../storage/schema.js';
import type { Session } from './sessionStore.js';

/** What a claims check found: nothing due, new claims (read the rows again), the session ended, or kept as it was. */
export type ClaimsCheckOutcome = 'fresh' | 'refreshed' | 'ended' | 'kept';

/**
 * Keeping a session's claims true to its IdP, as the session resolver asks for it. Only authenticate/
 * talks to IdPs: it implements this (authenticate/claimsRefresher.ts), and the composition root hands
 * it in, so sessions/ never imports authenticate/.
 */
export interface ClaimsCheck {
  /** Due for a re-check (cheap, synchronous: the hot path asks it on every cached hit). */
  isStale(session: Session, now?: number): boolean;
  /** Re-checks the claims if they are due; after 'refreshed' the session and identity rows must be read again. */
  refreshIfDue(session: Session, identity: Identity, log: FastifyBaseLogger, request?: RequestContext): Promise<ClaimsCheckOutcome>;
}
