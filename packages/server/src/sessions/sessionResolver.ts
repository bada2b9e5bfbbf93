import type { FastifyBaseLogger } from 'fastify';
import type { RequestContext } from '../audit/auditLog.js';
import { identityClaims, type IdentityClaims } from '../accounts/accountStore.js';
import type { Identity, User } from '../storage/schema.js';
import type { ClaimsCheck } from './claimsCheck.js';
import type { ChangeFeed } from '../events/changes.js';
import type { SessionCacheStats } from '../operations/metrics.js';
import { SessionCache } from './sessionCache.js';
import { isActive, type Session, type SessionStore, type SessionWithPerson } from './sessionStore.js';
import { hashSecret, isWellFormedSecret, SECRET_LENGTH } from './sessionToken.js';

export interface CurrentSession {
  session: Session;
  user: User;
  identity: Identity;
  claims: IdentityClaims;
}

/** What resolving needs of the request: its logger, and IP and user agent for the audit log. */
export interface ResolveContext extends RequestContext {
  log: FastifyBaseLogger;
}

interface Cached extends CurrentSession {
  sessionId: string;
}

/**
 * Turns a credential (the portal cookie, or an app host's token) into the signed-in session, through a
 * bounded cache invalidated by every revocation. A session counts only while it is active and its user
 * is active; claims are re-checked with the IdP on schedule, and last-seen is written at most once per
 * touch interval.
 */
export class SessionResolver {
  private readonly cache: SessionCache<Cached>;

  constructor(
    private readonly deps: {
      sessions: SessionStore;
      claims: ClaimsCheck;
      /** Enabled providers: a session counts only while the provider it was signed in with does. */
      providers: { get(id: string): unknown };
      /**
       * Sessions ended or changed here or on another worker or node; claims refreshed here are told to
       * them. While it is out of sync (a dropped notification connection) nothing is cached.
       */
      changes: Pick<ChangeFeed, 'subscribe' | 'publish' | 'inSync'>;
      /** The session cache's budget in bytes, read at each store (session.cache.maxMemory: a reload may change it). */
      cacheMaxBytes?: () => number;
    },
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new SessionCache<Cached>({ maxBytes: deps.cacheMaxBytes });
    deps.changes.subscribe((change) => {
      if (change.type === 'sessions-ended' || change.type === 'sessions-changed') for (const id of change.sessionIds) this.cache.invalidate(id);
      else if (change.type === 'everything') this.cache.clear();
    });
  }

  /** Drops what is cached about a session (after a change made behind the stores' backs, e.g. by an admin tool). */
  invalidate(sessionId: string): void {
    this.cache.invalidate(sessionId);
  }

  portal(secret: string | undefined, request: ResolveContext): Promise<CurrentSession | undefined> {
    if (!isWellFormedSecret(secret)) return Promise.resolve(undefined);
    return this.resolve(secret, PORTAL_SCOPE, request, () => this.deps.sessions.findWithPerson({ secretHash: hashSecret(secret) }));
  }

  app(token: string | undefined, appOrigin: string, request: ResolveContext): Promise<CurrentSession | undefined> {
    if (!isWellFormedSecret(token)) return Promise.resolve(undefined);
    // The cache holds the token itself, not its hash: it lives in memory only (where the token passes
    // through anyway), and hashing on every request would be the hot path's largest cost.
    // The token is good only on the origin it was issued for (the app_sessions row's), checked in the same statement.
    return this.resolve(token, appOrigin, request, () => this.deps.sessions.findWithPerson({ appTokenHash: hashSecret(token), appOrigin }));
  }

  /**
   * The session by its id, judged as a cookie's is (live, its person active, its provider still on),
   * for the OpenID Provider's token steps: a token's grant names the session it was made in
   * (provide/access.ts). Cached like a credential's, under a scope of its own: a session id is a
   * public handle, and presented as a cookie or an app token it finds nothing here (the scope differs).
   * Revocations and claims changes drop it on every worker and node as they drop the cookie's entry.
   * Neither a claims check nor activity happens here: a client refreshing its tokens in the background
   * is not the person using the session.
   */
  byId(sessionId: string): Promise<CurrentSession | undefined> {
    return this.live(sessionId, SESSION_ID_SCOPE, () => this.deps.sessions.findWithPerson({ id: sessionId }), NO_ACTIVITY);
  }

  /** The session cache's lookups, size and evictions so far (metrics). */
  cacheStats(): SessionCacheStats {
    return this.cache.stats;
  }

  /**
   * The session for an app-host token when it is cached and nothing needs doing first (no load, no
   * claims check, no activity to record): the hot path's synchronous answer. Undefined means "not
   * known without waiting", never "signed out": the caller then asks `app`.
   */
  cachedApp(token: string | undefined, appOrigin: string, now = this.now()): CurrentSession | undefined {
    // Only well-formed tokens are ever stored, so a hit needs no shape check; the length check keeps
    // junk from being hashed for the lookup.
    if (token?.length !== SECRET_LENGTH || !this.deps.changes.inSync) return undefined;
    const current = this.cache.get(token, appOrigin, now);
    if (!current || !isActive(current.session, now)) return undefined;
    if (this.deps.claims.isStale(current.session, now) || this.deps.sessions.isTouchDue(current.session, now)) return undefined;
    return current;
  }

  /**
   * The session from the cache, or loaded (and cached), while it is active: one that expired since it
   * was cached is dropped from the cache here.
   */
  private async live(credential: string, scope: string, loadSession: () => Promise<SessionWithPerson | undefined>, activity: boolean): Promise<Cached | undefined> {
    // Out of sync, a revocation made elsewhere may not have reached the cache: read from the store.
    const cached = this.deps.changes.inSync ? this.cache.get(credential, scope) : undefined;
    const current = cached ?? (await this.loadAndCache(credential, scope, loadSession, activity));
    if (!current) return undefined;
    if (!isActive(current.session, this.now())) {
      this.cache.invalidate(current.sessionId);
      return undefined;
    }
    return current;
  }

  private async resolve(credential: string, scope: string, request: ResolveContext, loadSession: () => Promise<SessionWithPerson | undefined>): Promise<CurrentSession | undefined> {
    let current = await this.live(credential, scope, loadSession, ACTIVITY);
    if (!current) return undefined;
    if (this.deps.claims.isStale(current.session)) {
      const outcome = await this.deps.claims.refreshIfDue(current.session, current.identity, request.log, request);
      if (outcome === 'ended') return undefined;
      if (outcome === 'refreshed') {
        // Every worker and node drops what it cached about this session (and its assertions).
        this.deps.changes.publish({ type: 'sessions-changed', sessionIds: [current.sessionId] });
      } else {
        // Postponed (the IdP did not answer), or checked by another request or node: the row says when
        // the next check is due. Read it, or every request would ask again until the entry expires, and
        // the bound on unconfirmed claims (session.maxClaimsAge) would wait for that too.
        this.cache.invalidate(current.sessionId);
      }
      current = await this.loadAndCache(credential, scope, loadSession, ACTIVITY);
      if (!current) return undefined;
    }
    const touched = await this.deps.sessions.touch(current.session);
    if (touched !== current.session) {
      current = { ...current, session: touched };
      this.cache.update(credential, scope, current);
    }
    return current;
  }

  /**
   * Loads the session and caches it, unless a revocation (or any invalidation) landed while it was
   * being read: the read may then predate the revocation, and caching it would keep a revoked session
   * alive on the hot path until the ttl. It is then read once more — that read follows the revocation
   * that was noticed — and answered without caching (anything invalidated during the second read is
   * as concurrent with this request as can be; the next request loads afresh).
   */
  private async loadAndCache(credential: string, scope: string, loadSession: () => Promise<SessionWithPerson | undefined>, activity: boolean): Promise<Cached | undefined> {
    const generation = this.cache.generation;
    const loaded = await this.load(loadSession, activity);
    if (!loaded || !this.deps.changes.inSync) return loaded;
    if (this.cache.set(credential, scope, loaded, generation)) return loaded;
    return this.load(loadSession, activity);
  }

  /**
   * The session with its user and identity, read in one statement (sessionStore.ts, findWithPerson), when
   * it counts. With `activity`, the use is recorded here when it is due (`touch`), before the entry is
   * cached: a miss then stores the touched session once, instead of storing it, touching it and storing
   * it again (a second size estimate and a copy of the row, on the miss's path).
   */
  private async load(loadSession: () => Promise<SessionWithPerson | undefined>, activity: boolean): Promise<Cached | undefined> {
    const found = await loadSession();
    if (!found || !isActive(found.session, this.now())) return undefined;
    const { user, identity } = found;
    let { session } = found;
    if (!this.deps.providers.get(session.provider_id)) {
      // The provider is gone (removed from the config file, or off): nothing can re-check these claims
      // any more, so the session ends — not at its next claims check, up to an interval later. Turning
      // a provider off in the console revokes its sessions at once; this covers the config file.
      await this.deps.sessions.revoke(session.id, 'provider-disabled');
      return undefined;
    }
    if (user.status !== 'active') return undefined;
    if (activity) session = await this.deps.sessions.touch(session);
    return { sessionId: session.id, session, user, identity, claims: identityClaims(identity) };
  }
}

/** The cache scope of portal cookies; an app-host token's scope is its app origin (never this string). */
const PORTAL_SCOPE = 'portal';
/** Whether a load records the session's use (`touch`): a person's request does; the OpenID Provider's token steps do not. */
const ACTIVITY = true;
const NO_ACTIVITY = false;
/** The cache scope of sessions found by id (`byId`); no origin and not the portal's. */
const SESSION_ID_SCOPE = 'session-id';
