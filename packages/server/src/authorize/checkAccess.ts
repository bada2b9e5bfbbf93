import { policySubject } from '../accounts/admins.js';
import type { AppConfig } from '../config/schema.js';
import type { Services } from '../services.js';
import type { CurrentSession, ResolveContext } from '../sessions/sessionResolver.js';
import { identityHeaders } from './identityHeaders.js';
import { evaluatePolicy, type PolicyDecision } from './policy.js';
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

const NO_IDENTITY = identityHeaders(undefined);

/**
 * The one decision both the reverse proxy and the forward-auth endpoint make: public path or preflight
 * (let through with empty identity), no session (401), policy says no (403), or allowed with the
 * identity headers and the signed assertion. Nothing here ever allows by default.
 */
export async function checkAccess(services: Services, request: ResolveContext, access: AccessRequest): Promise<AccessResult> {
  const { app } = access;
  if (access.preflight && app.corsPreflight && access.method === 'OPTIONS') return { kind: 'public', headers: NO_IDENTITY };
  if (isPublicPath(access.path, app.publicPaths)) return { kind: 'public', headers: NO_IDENTITY };

  const current = await services.resolver.app(access.token, access.appOrigin, request);
  if (!current) return { kind: 'unauthenticated', headers: NO_IDENTITY };

  const { user, claims, session } = current;
  const decision = evaluatePolicy(app.policy, policySubject(services.config.admins, user, claims.groups, claims.extra));
  if (!decision.allow) {
    await recordDenial(services, request, current, app, decision);
    return { kind: 'denied', current, decision, headers: NO_IDENTITY };
  }

  const assertion = await services.assertions.assertion(
    { sessionId: session.id, userId: user.id, email: user.email, name: user.name, groups: claims.groups },
    access.appOrigin,
  );
  return {
    kind: 'allowed',
    current,
    decision,
    headers: identityHeaders({ userId: user.id, email: user.email, name: user.name, groups: claims.groups, assertion }),
  };
}

/** One access_denied audit event per (session, app) per minute: a refused browser retries a lot. */
const DENIAL_RECORD_INTERVAL_MS = 60_000;
const lastDenial = new Map<string, number>();

async function recordDenial(services: Services, request: ResolveContext, current: CurrentSession, app: AppConfig, decision: PolicyDecision): Promise<void> {
  const key = `${current.session.id}\u0000${app.id}`;
  const now = Date.now();
  if (now - (lastDenial.get(key) ?? 0) < DENIAL_RECORD_INTERVAL_MS) return;
  if (lastDenial.size >= 10_000) lastDenial.clear();
  lastDenial.set(key, now);
  await services.audit.record({
    type: 'access_denied',
    outcome: 'failure',
    actorUserId: current.user.id,
    targetUserId: current.user.id,
    sessionId: current.session.id,
    appId: app.id,
    request,
    details: { app: { id: app.id, name: app.name }, reason: decision.reason },
  });
}
