import { parseRoles } from '../accounts/roles.js';
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
  const decision = evaluatePolicy(app.policy, { email: user.email, groups: claims.groups, roles: parseRoles(user.roles), claims: claims.extra ?? {} });
  if (!decision.allow) return { kind: 'denied', current, decision, headers: NO_IDENTITY };

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
