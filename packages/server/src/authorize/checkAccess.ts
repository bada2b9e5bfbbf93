import { sessionGroups, type GroupTrust, type GroupTrustLookup } from '../accounts/effectiveGroups.js';
import type { AuditLog, RequestContext } from '../audit/auditLog.js';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import type { CurrentSession, ResolveContext, SessionResolver } from '../sessions/sessionResolver.js';
import type { AssertionSigner } from './assertion.js';
import { identityHeaders } from './identityHeaders.js';
import { evaluatePolicy, policySubject, type PolicyDecision } from './policy.js';
import { isPublicPath } from './publicPaths.js';

export type AccessResult =
  | { kind: 'public'; headers: Record<string, string> }
  | { kind: 'unauthenticated'; headers: Record<string, string> }
  | { kind: 'denied'; current: CurrentSession; decision: PolicyDecision; headers: Record<string, string> }
  | { kind: 'allowed'; current: CurrentSession; decision: PolicyDecision; headers: Record<string, string> };

export interface AccessRequest {
  app: AppConfig;
  appOrigin: string;
  method: string;
  /** The request target's path (query ignored for public-path matching). */
  path: string;
  /** The app host's session token from its cookie. */
  token: string | undefined;
  /** Origin and Access-Control-Request-Method headers, for CORS preflights. */
  preflight: boolean;
}

/** What deciding access takes: the session behind a token, the providers' group trust, the admins, the signer, the audit log. */
export interface AccessDeps {
  resolver: Pick<SessionResolver, 'app' | 'cachedApp'>;
  providers: GroupTrustLookup;
  running: InForce<Pick<Config, 'admins'>>;
  assertions: Pick<AssertionSigner, 'assertion'>;
  audit: Pick<AuditLog, 'record'>;
}

const NO_IDENTITY = identityHeaders(undefined);

/**
 * The one decision both the reverse proxy and the forward-auth endpoint make: public path or preflight
 * (let through with empty identity), no session (401), policy says no (403), or allowed with the
 * identity headers and the signed assertion. Nothing here ever allows by default.
 */
export async function checkAccess(deps: AccessDeps, request: ResolveContext, access: AccessRequest): Promise<AccessResult> {
  const { app } = access;
  const open = publicAccess(access);
  if (open) return open;

  const current = await deps.resolver.app(access.token, access.appOrigin, request);
  if (!current) return { kind: 'unauthenticated', headers: NO_IDENTITY };

  const decided = await decide(deps, current, access);
  if (decided.kind === 'denied') await recordDenial(deps, request, current, app, decided.decision);
  return decided;
}

/**
 * The same decision when it can be made without waiting: a public path or preflight, or a session
 * that is cached and fresh with an allowing decision already made for this app. Undefined means "ask
 * `checkAccess`" (a denial always goes that way, so it is recorded), never a refusal. This is what
 * lets the hot path answer most requests in the same turn of the event loop they arrived in.
 */
export function checkAccessNow(deps: AccessDeps, access: AccessRequest): AccessResult | undefined {
  const open = publicAccess(access);
  if (open) return open;
  // One clock read for the whole check: in Node 20 each Date.now() is a call into the runtime.
  const now = Date.now();
  const current = deps.resolver.cachedApp(access.token, access.appOrigin, now);
  const reused = current && reusedDecision(deps, current, access.app, now);
  return reused?.kind === 'allowed' ? reused : undefined;
}

const PUBLIC: AccessResult = { kind: 'public', headers: NO_IDENTITY };

function publicAccess({ app, preflight, method, path }: AccessRequest): AccessResult | undefined {
  if (preflight && app.corsPreflight && method === 'OPTIONS') return PUBLIC;
  if (isPublicPath(path, app.publicPaths)) return PUBLIC;
  return undefined;
}

/**
 * How long a decision is reused for the same resolved session and app. A revocation, a claims change
 * or a change to the app makes a new session object or app object, so the reuse ends at once; the
 * interval bounds it otherwise, and is shorter than the signer's reuse margin, so a reused assertion
 * always has more than a minute to live.
 */
const DECISION_REUSE_MS = 30_000;
type Decided = Extract<AccessResult, { kind: 'denied' | 'allowed' }>;
/**
 * Each decision also keeps the provider definition it used: a provider changed in the console (its
 * groups trusted or not any more, turned off) is a new object in the registry, so the reuse ends at once.
 */
const decisions = new WeakMap<CurrentSession, WeakMap<AppConfig, { result: Decided; until: number; provider: GroupTrust | undefined }>>();

function reusedDecision(deps: AccessDeps, current: CurrentSession, app: AppConfig, now: number): Decided | undefined {
  const reused = decisions.get(current)?.get(app);
  return reused && reused.until > now && reused.provider === deps.providers.get(current.identity.provider_id) ? reused.result : undefined;
}

async function decide(deps: AccessDeps, current: CurrentSession, access: AccessRequest): Promise<Decided> {
  const now = Date.now();
  const reused = reusedDecision(deps, current, access.app, now);
  if (reused) return reused;

  const { user } = current;
  // Only the groups and claims that count from the session's provider (trusted, or prefixed) decide and go upstream.
  const groups = sessionGroups(deps.providers, current);
  const decision = evaluatePolicy(access.app.policy, policySubject(deps.running.current.admins, user, groups));
  let result: Decided;
  if (!decision.allow) {
    result = { kind: 'denied', current, decision, headers: NO_IDENTITY };
  } else {
    const assertion = deps.assertions.assertion(current, { userId: user.id, email: user.email, name: user.name, groups: groups.counted }, access.appOrigin);
    result = {
      kind: 'allowed',
      current,
      decision,
      headers: identityHeaders({ userId: user.id, email: user.email, name: user.name, groups: groups.counted, assertion }),
    };
  }
  let byApp = decisions.get(current);
  if (!byApp) decisions.set(current, (byApp = new WeakMap()));
  byApp.set(access.app, { result, until: now + DECISION_REUSE_MS, provider: deps.providers.get(current.identity.provider_id) });
  return result;
}

/**
 * One access_denied audit event per (session, app, OpenID Provider step) per minute: a refused browser
 * retries a lot, and so does an app polling with prompt=none.
 */
const DENIAL_RECORD_INTERVAL_MS = 60_000;
const lastDenial = new Map<string, number>();

/** A refusal by the app's policy, recorded as access_denied; `oidcStep` names the OpenID Provider's step that refused. */
export async function recordDenial(
  deps: { audit: Pick<AuditLog, 'record'> },
  request: RequestContext,
  current: CurrentSession,
  app: AppConfig,
  decision: PolicyDecision,
  oidcStep?: 'authorization' | 'token' | 'userinfo',
): Promise<void> {
  const key = `${current.session.id}\u0000${app.id}\u0000${oidcStep ?? ''}`;
  const now = Date.now();
  if (now - (lastDenial.get(key) ?? 0) < DENIAL_RECORD_INTERVAL_MS) return;
  if (lastDenial.size >= 10_000) lastDenial.clear();
  lastDenial.set(key, now);
  await deps.audit.record({
    type: 'access_denied',
    outcome: 'failure',
    actorUserId: current.user.id,
    targetUserId: current.user.id,
    sessionId: current.session.id,
    appId: app.id,
    request,
    details: { app: { id: app.id, name: app.name }, reason: decision.reason, ...(oidcStep ? { oidc: oidcStep } : {}) },
  });
}
