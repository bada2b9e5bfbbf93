import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { sessionGroups, type GroupTrustLookup } from '../accounts/effectiveGroups.js';
import type { AuditLog } from '../audit/auditLog.js';
import { evaluatePolicy, policySubject, ruleLabel, type PolicyDecision } from '../authorize/policy.js';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import type { RequestNotes } from '../operations/observe.js';
import type { CurrentSession, SessionResolver } from '../sessions/sessionResolver.js';
import type { OpStore } from './opStore.js';

/**
 * The app's policy, asked at every step of the OpenID Provider: each authorization (an existing grant
 * included), each code exchange, each refresh and each userinfo call. The person is always taken from
 * the Gatehouse session the grant was made in, as the proxy takes it: through the session cache that
 * every revocation, suspension and claims change invalidates on every worker and node at once. A
 * session that ended, a person suspended or no longer admitted by the policy gets nothing more
 * (node-oidc-provider #392: a refresh that re-checks the person).
 */
export interface ProvideAccessDeps {
  /** The Gatehouse session a grant was made in, by its id (sessions/sessionResolver.ts, `byId`). */
  sessions: Pick<SessionResolver, 'byId'>;
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
