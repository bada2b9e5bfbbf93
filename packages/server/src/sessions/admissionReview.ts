import type { FastifyBaseLogger } from 'fastify';
import type { OrganizationRules } from '../accounts/admission.js';
import { identityClaims, type SignInProvider } from '../accounts/accountStore.js';
import { judgeSignIn, type SignInRefusal } from '../accounts/signInRules.js';
import type { AuditLog, RequestContext } from '../audit/auditLog.js';
import type { LiveAdmission, SessionStore } from './sessionStore.js';

/** Which sessions a review judges: those of some providers (their rules changed), or all (the organisation's did, or at start). */
export type ReviewScope = { providers: readonly string[] } | 'all';

/** Who changed the rules, for the audit events of the sessions a review ends. */
export interface ReviewCause {
  /** What changed: `console` (an admin), `reload` (the configuration file), `start` (the file read at start). */
  by: 'console' | 'reload' | 'start';
  actorUserId?: string | undefined;
  request?: RequestContext | undefined;
}

export interface AdmissionReviewDeps {
  sessions: Pick<SessionStore, 'liveForAdmission' | 'revokeMany'>;
  audit: Pick<AuditLog, 'record'>;
  /** An enabled, published provider as it is now (the registry); the sessions of one that is not are ended elsewhere. */
  providers: { get(id: string): SignInProvider | undefined };
  /** The organisation's "Who may sign in" as it is now. */
  organization: () => Promise<OrganizationRules>;
  log: FastifyBaseLogger;
}

/** Sessions read and judged per page. */
const PAGE = 500;
/**
 * The review runs once more this long after a change: a sign-in judged under the old rules a moment
 * before (here, or on a node that had not yet heard of the change) may create its session after the
 * first pass read the sessions.
 */
export const SECOND_PASS_MS = 5_000;

/**
 * When an operator narrows who may sign in — a domain removed from a provider's or the organisation's
 * list, a tenant, a Workspace domain or a GitHub organisation removed, in the console or by a reload,
 * or a file changed while Gatehouse was stopped — every live session of the providers concerned is
 * judged again, with what its IdP last said (the identity's kept email and facts), exactly as a fresh
 * sign-in would be (accounts/signInRules.ts). Those that no longer pass end now, each with an audit
 * event (`admission-changed`), not at their next claims check nor up to a week later. Threat: a
 * partner an operator removed keeping their sessions.
 *
 * Returns how many sessions it ended. Idempotent: several workers or nodes reviewing at once end each
 * session once (the revocation is conditional) and record it once.
 */
export async function reviewAdmission(deps: AdmissionReviewDeps, scope: ReviewScope, cause: ReviewCause): Promise<number> {
  const started = performance.now();
  const organization = await deps.organization();
  const providerIds = scope === 'all' ? undefined : scope.providers;
  let ended = 0;
  let judged = 0;
  let after: string | undefined;
  for (;;) {
    const page = await deps.sessions.liveForAdmission({ providerIds, after, limit: PAGE });
    if (page.length === 0) break;
    after = page.at(-1)!.sessionId;
    judged += page.length;
    const refused = new Map<string, SignInRefusal>();
    for (const live of page) {
      const refusal = judgeLive(deps, organization, live);
      if (refusal) refused.set(live.sessionId, refusal);
    }
    if (refused.size > 0) ended += await endRefused(deps, refused, cause);
    if (page.length < PAGE) break;
  }
  const scopeOf = scope === 'all' ? 'all' : scope.providers;
  if (ended > 0) deps.log.info({ by: cause.by, sessionsEnded: ended, scope: scopeOf }, 'sessions ended: they no longer pass the rules of who may sign in');
  // How long a review takes grows with the live sessions (every one is read and judged): an operator of
  // many sees it here, at each start among others.
  deps.log.info({ by: cause.by, scope: scopeOf, sessionsJudged: judged, sessionsEnded: ended, ms: Math.round(performance.now() - started) }, 'live sessions judged against the rules of who may sign in');
  return ended;
}

/**
 * Reviews now and once more after SECOND_PASS_MS (in the background; a failure of the second pass is
 * logged). Returns what the first pass ended.
 */
export async function reviewAdmissionTwice(deps: AdmissionReviewDeps, scope: ReviewScope, cause: ReviewCause): Promise<number> {
  const ended = await reviewAdmission(deps, scope, cause);
  setTimeout(() => {
    reviewAdmission(deps, scope, { by: cause.by, actorUserId: cause.actorUserId }).catch((error: unknown) =>
      deps.log.error({ err: error }, 'the second review of live sessions against the rules of who may sign in failed'),
    );
  }, SECOND_PASS_MS).unref();
  return ended;
}

/** A fresh sign-in with what the IdP last said, as this session's user: admitted (undefined), or why not. */
function judgeLive(deps: AdmissionReviewDeps, organization: OrganizationRules, live: LiveAdmission): SignInRefusal | undefined {
  const provider = deps.providers.get(live.providerId);
  // A provider turned off or removed ends its sessions by itself ('provider-disabled').
  if (!provider) return undefined;
  const { facts } = identityClaims({ claims: live.claims });
  const verdict = judgeSignIn({
    provider,
    organization,
    profile: { email: live.email ?? undefined, emailVerified: live.emailVerified === 1, facts },
    linkedUser: { id: live.userId, status: live.userStatus, primary: live.primaryIdentityId === live.identityId },
    // Whose address this is does not change with the rules: a claims re-check judges that.
    usersWithEmail: [],
  });
  return verdict.kind === 'refused' ? verdict : undefined;
}

async function endRefused(deps: AdmissionReviewDeps, refused: Map<string, SignInRefusal>, cause: ReviewCause): Promise<number> {
  const revoked = await deps.sessions.revokeMany([...refused.keys()], 'admission-changed');
  for (const session of revoked) {
    const refusal = refused.get(session.id)!;
    await deps.audit.record({
      type: 'session_revoked',
      actorUserId: cause.actorUserId,
      targetUserId: session.user_id,
      sessionId: session.id,
      providerId: session.provider_id,
      request: cause.request,
      details: { by: 'system', changedBy: cause.by, reason: 'admission-changed', refusal: refusal.reason, detail: refusal.why, sessionId: session.id },
    });
  }
  return revoked.length;
}
