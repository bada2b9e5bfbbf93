import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { identityClaims } from '../accounts/accountStore.js';
import { sessionGroups, type GroupTrustLookup } from '../accounts/effectiveGroups.js';
import type { AuditLog } from '../audit/auditLog.js';
import { evaluatePolicy, policySubject, ruleLabel, type PolicyDecision } from '../authorize/policy.js';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import type { RequestNotes } from '../operations/observe.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { isActive, type SessionStore } from '../sessions/sessionStore.js';
import type { OpStore } from './opStore.js';

/**
 * The app's policy, asked at every step of the OpenID Provider: each authorization (an existing grant
 * included), each code exchange, each refresh and each userinfo call. The person is always taken from
 * the Gatehouse session the grant was made in, read afresh: a session that ended, a person suspended
 * or no longer admitted by the policy gets nothing more (node-oidc-provider #392: a refresh that
 * re-checks the person).
 */
export interface ProvideAccessDeps {
  sessions: Pick<SessionStore, 'findWithPerson'>;
  providers: GroupTrustLookup;
  running: InForce<Pick<Config, 'admins'>>;
  audit: Pick<AuditLog, 'record'>;
}

/**
 * A grant's id names the Gatehouse session it was made in: `<session id>.<random>`. Session ids are
 * public handles (base64url, never a credential) without a dot, so the session is read back from any
 * token of the grant without a lookup, and a grant can never be moved to another session.
 */
export function grantIdFor(sessionId: string): string {
  return `${sessionId}.${randomBytes(16).toString('base64url')}`;
}

export function sessionOfGrant(grantId: unknown): string | undefined {
  if (typeof grantId !== 'string') return undefined;
  const [sessionId, rest, extra] = grantId.split('.');
  return sessionId && rest && extra === undefined ? sessionId : undefined;
}

/** Where each grant is recorded with the Gatehouse session it was made in (op_grants, provide/opStore.ts). */
export type GrantLedger = Pick<OpStore, 'recordGrant'>;

/** The Gatehouse session by its id, when it is still live and its person active (as the resolver judges a cookie's). */
export async function liveSession(deps: Pick<ProvideAccessDeps, 'sessions' | 'providers'>, sessionId: string, now = Date.now()): Promise<CurrentSession | undefined> {
  const found = await deps.sessions.findWithPerson({ id: sessionId });
  if (!found || !isActive(found.session, now)) return undefined;
  const { session, user, identity } = found;
  // A session of a provider removed or turned off counts no more (sessions/sessionResolver.ts does the same).
  if (!deps.providers.get(session.provider_id)) return undefined;
  if (user.status !== 'active') return undefined;
  return { session, user, identity, claims: identityClaims(identity) };
}

/** The app's policy on the person of a session, with groups counted as everywhere (only trusted providers, per session). */
export function decide(deps: Pick<ProvideAccessDeps, 'providers' | 'running'>, current: CurrentSession, app: AppConfig): PolicyDecision {
  return evaluatePolicy(app.policy, policySubject(deps.running.current.admins, current.user, sessionGroups(deps.providers, current)));
}

/**
 * An OpenID Provider step's decision, for the access log and `gatehouse_access_decisions_total` (area
 * `oidc`) as the proxy's are: the app's policy on the person (`allowed`, `denied` and the rule), or
 * `unauthenticated` when there is no live Gatehouse session to ask it of (signed out, or the session a
 * token's grant was made in has ended).
 */
export function noteAccess(
  notes: Pick<RequestNotes, 'decided'>,
  request: IncomingMessage,
  app: AppConfig,
  outcome: PolicyDecision | 'unauthenticated',
  current: CurrentSession | undefined,
): void {
  const user = current && { id: current.user.id, email: current.user.email };
  if (outcome === 'unauthenticated') notes.decided(request, app.id, 'unauthenticated', 'none', user);
  else notes.decided(request, app.id, outcome.allow ? 'allowed' : 'denied', ruleLabel(outcome.decidedBy), user);
}
