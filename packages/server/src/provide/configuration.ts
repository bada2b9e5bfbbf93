import { createHmac } from 'node:crypto';
import { oidcEndpoints } from '@gatehouse/contract';
import type { Account, Adapter, AdapterFactory, Configuration, JWK, KoaContextWithOIDC } from 'oidc-provider';
import { interactionPolicy } from 'oidc-provider';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { personClaims, SCOPE_CLAIMS } from './claims.js';
import { clientMetadata, type OidcClientCatalogue } from './clients.js';
import { recordDenial } from '../authorize/checkAccess.js';
import { decide, grantIdFor, sessionOfGrant, type ProvideAccessDeps } from './access.js';
import type { AppConfig } from '../config/schema.js';
import type { PolicyDecision } from '../authorize/policy.js';

/** What a request to the OpenID Provider carries from Gatehouse: the Gatehouse session of the browser, if any. */
export interface ProvideRequest {
  /** The Gatehouse session of the portal cookie (the sessions area's resolver), read at most once. */
  currentSession(): Promise<CurrentSession | undefined>;
  /** For the audit log. */
  ip: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** The app's policy was asked for this request (or could not be: no live session), for the access log (access.ts, noteAccess). */
  decided(app: AppConfig, outcome: PolicyDecision | 'unauthenticated', current: CurrentSession | undefined): void;
}

export interface ConfigurationDeps extends ProvideAccessDeps {
  clients: OidcClientCatalogue;
  /** The key the server's secrets derive the OP's own keys from (cookie signing, pairwise subjects, client placeholders). */
  secretKey: Buffer;
  /** The ID token signing keys (private JWKs), the active one of each algorithm first. */
  signingJwks: JWK[];
  /** The oidc-provider adapter for every model but Client (provide/adapter.ts; its memory adapter in unit tests). */
  adapter: AdapterFactory;
  /** The request being answered (provide/mount.ts carries it through oidc-provider's calls). */
  request(): ProvideRequest | undefined;
  /** Pages in Gatehouse's design for people (provide/pages.ts). */
  pages: ProvidePages;
}

export interface ProvidePages {
  error(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string | undefined }, app: AppConfig | undefined): void;
  logoutConfirm(ctx: KoaContextWithOIDC, form: string, app: AppConfig | undefined): void;
  loggedOut(ctx: KoaContextWithOIDC, app: AppConfig | undefined): void;
}

/** A key of its own for each use, derived from the server's secret key (HKDF would serve as well: one HMAC per label). */
export function derivedKey(secretKey: Buffer, label: string): Buffer {
  return createHmac('sha256', secretKey).update(`gatehouse/oidc/${label}`).digest();
}

/** The cookie names of the OP: Gatehouse's, so none clash with an app's or the development IdP's. */
export const OP_COOKIES = { session: 'gatehouse_op_session', interaction: 'gatehouse_op_interaction', resume: 'gatehouse_op_resume' } as const;

/** The Gatehouse session a request's OP context belongs to, once findAccount has read it (ttl bounds). */
const sessionOfContext = new WeakMap<object, CurrentSession>();

const seconds = (ms: number) => Math.max(1, Math.floor(ms / 1000));

/**
 * oidc-provider's configuration (pure: everything it reads comes in as `deps`). The login step,
 * policy at every step, clients from the app catalogue, claims, keys and the house's pages.
 */
export function opConfiguration(deps: ConfigurationDeps): Configuration {
  const clientsAdapter: Adapter = {
    // Only `find` is ever called for clients: dynamic registration is off.
    async find(id: string) {
      const found = deps.clients.client(id);
      return found ? (clientMetadata(found, derivedKey(deps.secretKey, 'client-secret-placeholder')) as unknown as Record<string, unknown>) : undefined;
    },
    async upsert() {
      throw new Error('clients come from the app catalogue');
    },
    async findByUid() {
      return undefined;
    },
    async findByUserCode() {
      return undefined;
    },
    async consume() {},
    async destroy() {},
    async revokeByGrantId() {},
  };
  const appOf = (clientId: string | undefined) => (clientId ? deps.clients.client(clientId) : undefined);
  const pairwiseKey = derivedKey(deps.secretKey, 'pairwise-subject');

  // The session bound of a token: never past the Gatehouse session it belongs to.
  const bounded = (ctx: KoaContextWithOIDC, lifetime: number) => {
    const current = sessionOfContext.get(ctx);
    return current ? Math.min(seconds(lifetime), seconds(current.session.absolute_expires_at - Date.now())) : seconds(lifetime);
  };
  const lifetimes = (client: { clientId: string } | undefined) => appOf(client?.clientId)?.oidc;

  const basePolicy = interactionPolicy.base();
  const login = basePolicy.get('login')!;
  // The OP's session is a view of the Gatehouse session: it counts only while the browser's Gatehouse
  // session is the one it was made from (same person, same sign-in). Signed out of Gatehouse, or signed
  // in again as someone else, the OP asks again (`prompt=none`: login_required).
  login.checks.add(
    new interactionPolicy.Check('gatehouse_session', 'the Gatehouse session is not the one this sign-in was made in', 'login_required', async (ctx) => {
      const request = deps.request();
      const current = await request?.currentSession();
      if (!current) {
        const found = appOf(ctx.oidc.client?.clientId);
        if (found) request?.decided(found.app, 'unauthenticated', undefined);
        return interactionPolicy.Check.REQUEST_PROMPT;
      }
      const accountId = ctx.oidc.session?.accountId;
      const loginTs = ctx.oidc.session?.loginTs;
      if (!accountId) return interactionPolicy.Check.REQUEST_PROMPT;
      return accountId === current.user.id && loginTs === seconds(current.session.created_at) ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
    }),
    0,
  );
  // The app's policy at every authorization, an existing grant included: a person it refuses is
  // answered access_denied (with prompt=none, to the redirect URI) or shown the 403 page naming the app.
  const policy = new interactionPolicy.Prompt(
    { name: 'gatehouse_policy', requestable: false },
    new interactionPolicy.Check('policy_denied', 'the app’s policy does not let this person sign in', 'access_denied', async (ctx) => {
      const request = deps.request();
      const current = await request?.currentSession();
      const found = appOf(ctx.oidc.client?.clientId);
      if (!current || !found) return interactionPolicy.Check.REQUEST_PROMPT;
      const decision = decide(deps, current, found.app);
      request?.decided(found.app, decision, current);
      if (decision.allow) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      if (request) await recordDenial(deps, request, current, found.app, decision, 'authorization');
      return interactionPolicy.Check.REQUEST_PROMPT;
    }),
  );
  basePolicy.add(policy, 1);

  return {
    adapter: (name: string) => (name === 'Client' ? clientsAdapter : deps.adapter(name)),
    clients: [],
    jwks: { keys: deps.signingJwks },
    scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
    claims: Object.fromEntries(Object.entries(SCOPE_CLAIMS).map(([scope, claims]) => [scope, [...claims]])),
    responseTypes: ['code'],
    // A client's `subject` chooses: one sub per person everywhere, or one per client (pairwiseIdentifier).
    subjectTypes: ['public', 'pairwise'],
    // Exact matching of the one registered redirect URI too: an app always says where it wants the code.
    allowOmittingSingleRegisteredRedirectUri: false,
    // Scope claims are put in the ID token by `claims()` per client (claimsInIdToken), never by default.
    conformIdTokenClaims: false,
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      // Clients authenticating with their own keys (private_key_jwt) sign with asymmetric keys only.
      clientAuthSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requestObjectSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    routes: {
      authorization: oidcEndpoints.authorization,
      token: oidcEndpoints.token,
      userinfo: oidcEndpoints.userinfo,
      jwks: oidcEndpoints.jwks,
      revocation: oidcEndpoints.revocation,
      introspection: oidcEndpoints.introspection,
      pushed_authorization_request: oidcEndpoints.pushedAuthorizationRequest,
      end_session: oidcEndpoints.endSession,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: true },
      userinfo: { enabled: true },
      jwtUserinfo: { enabled: false },
      pushedAuthorizationRequests: { enabled: true },
      backchannelLogout: { enabled: true },
      claimsParameter: { enabled: false },
      resourceIndicators: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => deps.pages.logoutConfirm(ctx, form, appOf(ctx.oidc.client?.clientId)?.app),
        postLogoutSuccessSource: async (ctx) => deps.pages.loggedOut(ctx, appOf(ctx.oidc.client?.clientId)?.app),
      },
    },
    renderError: async (ctx, out, _error) => deps.pages.error(ctx, out, appOf(ctx.oidc?.client?.clientId)?.app),
    // CORS only for the browser-facing JSON endpoints and only from the origins of the client's own
    // redirect URIs (a single-page app calls the token endpoint from its own origin).
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    cookies: {
      names: OP_COOKIES,
      keys: [derivedKey(deps.secretKey, 'cookies')],
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    pairwiseIdentifier: async (_ctx, accountId, client) =>
      createHmac('sha256', pairwiseKey).update(`${client.sectorIdentifier ?? ''}\u0000${accountId}`).digest('base64url'),
    interactions: {
      policy: basePolicy,
      url: (_ctx, interaction) => oidcEndpoints.interactionUrl(interaction.uid),
    },
    rotateRefreshToken: true,
    // A refresh token for a client that may refresh: one that asked offline_access, or a confidential one.
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && (code.scopes.has('offline_access') || client.clientAuthMethod !== 'none'),
    ttl: {
      AccessToken: (ctx, _token, client) => bounded(ctx, lifetimes(client)?.accessTokenLifetime ?? 600_000),
      IdToken: (ctx, _token, client) => bounded(ctx, lifetimes(client)?.idTokenLifetime ?? 3_600_000),
      RefreshToken: (ctx, _token, client) => bounded(ctx, lifetimes(client)?.refreshTokenLifetime ?? 14 * 86_400_000),
      AuthorizationCode: 60,
      Interaction: 600,
      Grant: (ctx) => bounded(ctx, 14 * 86_400_000),
      Session: (ctx) => bounded(ctx, 14 * 86_400_000),
    },
    // The grant belongs to the Gatehouse session it is made in (its id names it, provide/access.ts):
    // a grant of another session is never reused. First-party clients are granted what they ask of
    // their allowed scopes without a consent page; a third-party client's grant comes from its consent.
    loadExistingGrant: async (ctx) => {
      const current = sessionOfContext.get(ctx) ?? (await deps.request()?.currentSession());
      const found = appOf(ctx.oidc.client?.clientId);
      if (!current || !found) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(found.clientId);
      let grant = grantId && sessionOfGrant(grantId) === current.session.id ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
      if (found.oidc.thirdParty) return grant;
      grant ??= new ctx.oidc.provider.Grant({ jti: grantIdFor(current.session.id), accountId: current.user.id, clientId: found.clientId } as never);
      const requested = [...(ctx.oidc.requestParamOIDCScopes ?? [])].filter((scope) => (found.oidc.scopes as readonly string[]).includes(scope));
      grant.addOIDCScope(requested.join(' '));
      await grant.save();
      return grant;
    },
    findAccount: async (ctx, sub, token) => {
      const found = appOf(ctx.oidc.client?.clientId);
      if (!found) return undefined;
      // Where the Gatehouse session comes from: a token names it through its grant; the authorization
      // endpoint has the browser's.
      const request = deps.request();
      const sessionId = token ? sessionOfGrant(token.grantId) : undefined;
      const current = sessionId ? await deps.sessions.byId(sessionId) : token ? undefined : await request?.currentSession();
      if (token && !current) request?.decided(found.app, 'unauthenticated', undefined);
      if (!current || current.user.id !== sub) return undefined;
      // At the authorization endpoint the policy is the gatehouse_policy check's (its answer is
      // access_denied or the 403 page); with a token, this is the code exchange, refresh or userinfo.
      const decision = token ? decide(deps, current, found.app) : { allow: true, reason: '', decidedBy: null };
      if (token) request?.decided(found.app, decision, current);
      if (!decision.allow) {
        if (request) await recordDenial(deps, request, current, found.app, decision, token?.kind === 'AccessToken' ? 'userinfo' : 'token');
        return undefined;
      }
      sessionOfContext.set(ctx, current);
      const account: Account = {
        accountId: sub,
        claims: async (use) => {
          const claims = personClaims(deps.providers, current);
          // claimsInIdToken off: the ID token says who (sub) and nothing more; the rest at userinfo.
          return use === 'id_token' && !found.oidc.claimsInIdToken ? { sub: claims.sub as string } : { ...claims, sub: claims.sub as string };
        },
      };
      return account;
    },
  } satisfies Configuration;
}
