import type { FastifyBaseLogger } from 'fastify';
import type { AccountStore } from '../accounts/accountStore.js';
import type { SignInSettingsStore } from '../accounts/signInSettings.js';
import type { SignInRefusal } from '../accounts/signInRules.js';
import type { AuditLog, RequestContext } from '../audit/auditLog.js';
import { AppError } from '../errors.js';
import type { Identity } from '../storage/schema.js';
import { SessionStore, type Session } from '../sessions/sessionStore.js';
import type { AppRegistry } from '../apps/appRegistry.js';
import { keptAccessToken } from './callback.js';
import type { ProviderRegistry } from '../providers/providerRegistry.js';

/** A kept access token is renewed when it has less than this left (apps must never get a dead one). */
const ACCESS_TOKEN_MARGIN_MS = 60_000;

/** When an IdP cannot be reached, try again after this long rather than at every request. */
const RETRY_UNREACHABLE_MS = 60_000;

export type RefreshOutcome = 'fresh' | 'refreshed' | 'ended' | 'kept';

/** The settings a re-check reads at each use (a config reload may change them). */
export interface ClaimsTimings {
  /** How often a used session's claims are re-checked (session.claimsRefreshInterval). */
  interval: number;
  /** How long a session's claims may go unconfirmed (a check postponed, the IdP unreachable) before it ends (session.maxClaimsAge). */
  maxAge: number;
}

/**
 * Keeps a session's claims true to the IdP: while a session is used, its refresh token is redeemed
 * every `claimsRefreshInterval`, so a group removed at the IdP stops counting within that interval.
 * The refresh token belongs to the session (two sessions of one person never rotate each other's
 * tokens). One refresh at a time per session: in this process by a single-flight map, across nodes by
 * a compare-and-set on claims_checked_at.
 *
 * What the IdP says at a re-check passes the same rules as a sign-in (accounts/admission.ts, through
 * AccountStore.recheck): a verified email, the domain lists, the kind's own rules, an address no other
 * user has. An answer they refuse ends every session of the identity (`claims-refused`), and nothing
 * of it is kept. A refresh the IdP refuses (invalid_grant), or whose ID token is for another issuer or
 * subject, ends the session; an unreachable IdP keeps it until the next try, but never for longer than
 * `session.maxClaimsAge` after the claims were last confirmed (`claims-unconfirmed`). Threat: a person
 * keeping old groups by keeping the IdP from answering (GitHub's rate limit, which their own tokens
 * share, can be spent on purpose).
 */
export class ClaimsRefresher {
  private readonly inflight = new Map<string, Promise<RefreshOutcome>>();

  constructor(
    private readonly deps: {
      providers: ProviderRegistry;
      sessions: SessionStore;
      accounts: AccountStore;
      audit: AuditLog;
      apps: AppRegistry;
      /** The organisation's "Who may sign in", read at every re-check as at every sign-in. */
      signInSettings: Pick<SignInSettingsStore, 'get'>;
    },
    /** The timings, or where to read them at each use (a config reload may change them). */
    private readonly timings: ClaimsTimings | (() => ClaimsTimings),
    private readonly now: () => number = Date.now,
  ) {}

  private get settings(): ClaimsTimings {
    return typeof this.timings === 'function' ? this.timings() : this.timings;
  }

  /** Due for a re-check: the interval passed, or a kept access token is about to expire. */
  isStale(session: Session, now = this.now()): boolean {
    if (now - session.claims_checked_at >= this.settings.interval) return true;
    return session.access_token_expires_at !== null && session.access_token_expires_at - now < ACCESS_TOKEN_MARGIN_MS;
  }

  /** Re-checks the claims if they are due; the session and identity rows must then be read again. */
  refreshIfDue(session: Session, identity: Identity, log: FastifyBaseLogger, request?: RequestContext): Promise<RefreshOutcome> {
    if (!this.isStale(session)) return Promise.resolve('fresh');
    let pending = this.inflight.get(session.id);
    if (!pending) {
      pending = this.refresh(session, identity, log, request).finally(() => this.inflight.delete(session.id));
      this.inflight.set(session.id, pending);
    }
    return pending;
  }

  private async refresh(session: Session, identity: Identity, log: FastifyBaseLogger, request?: RequestContext): Promise<RefreshOutcome> {
    const { providers, sessions, accounts } = this.deps;
    const startedAt = this.now();
    // Another request or node got there first: its result will be in the database shortly.
    if (!(await sessions.beginClaimsCheck(session, startedAt))) return 'kept';

    const provider = providers.get(session.provider_id);
    // A disabled provider's sessions end.
    if (!provider) return this.end(session, 'refresh-failed', 'provider disabled', log, request);
    const refreshToken = sessions.refreshToken(session);

    try {
      const connection = await providers.connection(provider.id);
      const identityRef = { subject: identity.subject, sid: session.idp_sid ?? undefined };
      let tokens;
      if (refreshToken) {
        // The runtime checks that the refreshed claims are about the same person (OIDC Core §12.2).
        tokens = await connection.refresh(refreshToken, identityRef);
      } else if (connection.recheck) {
        // No refresh token (GitHub's OAuth apps): the claims are re-read with the kept access token.
        // Without one (lost, or unreadable after a key was retired) nothing can be re-checked: fail closed.
        const accessToken = sessions.accessToken(session);
        if (!accessToken) return await this.end(session, 'refresh-failed', 'no access token to re-check the claims with', log, request);
        tokens = await connection.recheck(accessToken, identityRef);
      } else {
        // Without a refresh token the claims from sign-in stand until the session expires (the IdP gave
        // no way to re-check them). The rules are still applied to them whenever they change
        // (sessions/admissionReview.ts).
        return 'kept';
      }
      // The same judgement as a sign-in with this answer, as this identity's user (nothing kept if refused).
      const outcome = await accounts.recheck(identity, provider, tokens.profile, await this.deps.signInSettings.get());
      if (outcome.kind === 'refused') return await this.refused(session, identity, outcome, log, request);
      await sessions.storeRefreshedTokens(session, {
        idToken: tokens.idToken,
        refreshToken: tokens.refreshToken,
        accessToken: keptAccessToken(this.deps, tokens.accessToken, connection.recheck !== undefined),
        checkedAt: startedAt,
      });
      log.debug({ sessionId: session.id, provider: provider.id }, 'claims refreshed');
      return 'refreshed';
    } catch (error) {
      if (error instanceof AppError && error.code === 'provider_unavailable') {
        const { interval, maxAge } = this.settings;
        const unconfirmedFor = startedAt - SessionStore.claimsVerifiedAt(session);
        if (unconfirmedFor >= maxAge) {
          return this.end(session, 'claims-unconfirmed', `${provider.name} could not confirm the claims for ${Math.round(unconfirmedFor / 1000)} s (session.maxClaimsAge)`, log, request, error.cause);
        }
        log.warn({ sessionId: session.id, provider: provider.id, err: error.cause }, 'claims refresh postponed: IdP unreachable');
        // The next try after RETRY_UNREACHABLE_MS, and never past the bound.
        const retryAt = Math.min(startedAt + RETRY_UNREACHABLE_MS, SessionStore.claimsVerifiedAt(session) + maxAge);
        await sessions.beginClaimsCheck({ ...session, claims_checked_at: startedAt }, retryAt - interval);
        return 'kept';
      }
      // invalid_grant, a token that fails verification, or anything else unexpected: fail closed.
      return this.end(session, 'refresh-failed', error instanceof AppError ? error.code : 'refresh failed', log, request, error);
    }
  }

  /**
   * What the IdP says now is refused by the rules: every session of this identity ends (each would be
   * re-checked to the same answer), each with its audit event.
   */
  private async refused(session: Session, identity: Identity, refusal: SignInRefusal, log: FastifyBaseLogger, request?: RequestContext): Promise<RefreshOutcome> {
    const ended = await this.deps.sessions.revokeForIdentity(identity.id, 'claims-refused');
    for (const each of ended) {
      await this.deps.audit.record({
        type: 'session_revoked',
        targetUserId: each.user_id,
        sessionId: each.id,
        providerId: each.provider_id,
        request: each.id === session.id ? request : undefined,
        details: { by: 'system', reason: 'claims-refused', refusal: refusal.reason, detail: refusal.why, sessionId: each.id },
      });
    }
    log.info({ sessionId: session.id, provider: session.provider_id, refusal: refusal.reason, why: refusal.why, sessionsEnded: ended.length }, 'session ended: the IdP now says something the sign-in rules refuse');
    return 'ended';
  }

  private async end(session: Session, reason: 'refresh-failed' | 'claims-unconfirmed', detail: string, log: FastifyBaseLogger, request?: RequestContext, cause?: unknown): Promise<RefreshOutcome> {
    if (await this.deps.sessions.revoke(session.id, reason)) {
      await this.deps.audit.record({
        type: 'session_revoked',
        targetUserId: session.user_id,
        sessionId: session.id,
        providerId: session.provider_id,
        request,
        details: { by: 'system', reason, detail, sessionId: session.id },
      });
    }
    log.info({ sessionId: session.id, provider: session.provider_id, reason, detail, err: cause }, `session ended: ${reason === 'claims-unconfirmed' ? 'claims unconfirmed for too long' : 'refresh failed'}`);
    return 'ended';
  }
}
