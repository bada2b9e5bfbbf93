import type { FastifyBaseLogger } from 'fastify';
import type { AccountStore } from '../accounts/accountStore.js';
import type { AuditLog, RequestContext } from '../audit/auditLog.js';
import { AppError } from '../errors.js';
import type { Identity } from '../storage/schema.js';
import type { Session, SessionStore } from '../sessions/sessionStore.js';
import type { AppRegistry } from '../authorize/appRegistry.js';
import { keptAccessToken } from './callback.js';
import type { ProviderRegistry } from './providerRegistry.js';

/** A kept access token is renewed when it has less than this left (apps must never get a dead one). */
const ACCESS_TOKEN_MARGIN_MS = 60_000;

/** When an IdP cannot be reached, try again after this long rather than at every request. */
const RETRY_UNREACHABLE_MS = 60_000;

export type RefreshOutcome = 'fresh' | 'refreshed' | 'ended' | 'kept';

/**
 * Keeps a session's claims true to the IdP: while a session is used, its refresh token is redeemed
 * every `claimsRefreshInterval`, so a group removed at the IdP stops counting within that interval.
 * The refresh token belongs to the session (two sessions of one person never rotate each other's
 * tokens). One refresh at a time per session: in this process by a single-flight map, across nodes by
 * a compare-and-set on claims_checked_at. A refresh the IdP refuses (invalid_grant), or whose ID token
 * is for another issuer or subject, ends the session; an unreachable IdP keeps it until the next try.
 */
export class ClaimsRefresher {
  private readonly inflight = new Map<string, Promise<RefreshOutcome>>();

  constructor(
    private readonly deps: { providers: ProviderRegistry; sessions: SessionStore; accounts: AccountStore; audit: AuditLog; apps: AppRegistry },
    /** The interval, or where to read it at each use (a config reload may change it). */
    private readonly interval: number | (() => number),
    private readonly now: () => number = Date.now,
  ) {}

  private get intervalMs(): number {
    return typeof this.interval === 'number' ? this.interval : this.interval();
  }

  /** Due for a re-check: the interval passed, or a kept access token is about to expire. */
  isStale(session: Session, now = this.now()): boolean {
    if (now - session.claims_checked_at >= this.intervalMs) return true;
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
    if (!provider) return this.end(session, 'provider disabled', log, request);
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
        if (!accessToken) return await this.end(session, 'no access token to re-check the claims with', log, request);
        tokens = await connection.recheck(accessToken, identityRef);
      } else {
        // Without a refresh token the claims from sign-in stand until the session expires (the IdP gave
        // no way to re-check them).
        return 'kept';
      }
      const profile = tokens.profile;
      await accounts.updateClaims(identity, profile);
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
        log.warn({ sessionId: session.id, provider: provider.id, err: error.cause }, 'claims refresh postponed: IdP unreachable');
        await sessions.beginClaimsCheck({ ...session, claims_checked_at: startedAt }, startedAt - this.intervalMs + RETRY_UNREACHABLE_MS);
        return 'kept';
      }
      // invalid_grant, a token that fails verification, or anything else unexpected: fail closed.
      return this.end(session, error instanceof AppError ? error.code : 'refresh failed', log, request, error);
    }
  }

  private async end(session: Session, reason: string, log: FastifyBaseLogger, request?: RequestContext, cause?: unknown): Promise<RefreshOutcome> {
    if (await this.deps.sessions.revoke(session.id, 'refresh-failed')) {
      await this.deps.audit.record({
        type: 'session_revoked',
        targetUserId: session.user_id,
        sessionId: session.id,
        providerId: session.provider_id,
        request,
        details: { by: 'system', reason: 'refresh-failed', detail: reason, sessionId: session.id },
      });
    }
    log.info({ sessionId: session.id, provider: session.provider_id, reason, err: cause }, 'session ended: refresh failed');
    return 'ended';
  }
}
