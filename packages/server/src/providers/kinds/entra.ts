import * as client from 'openid-client';
import type { ProviderOf } from '../../config/schema.js';
import { AppError } from '../../errors.js';
import { IDP_TIMEOUT_SECONDS } from '../oidcClient.js';
import { isNetworkError } from '../oidcErrors.js';
import { connectOidc, type Claims } from './oidc.js';

type Entra = ProviderOf<'entra'>;

/** More groups than mapClaims keeps is refused there; reading further pages would only cost time. */
const MAX_GROUPS = 500;
const MAX_PAGES = 20;

/**
 * Microsoft Entra ID: OpenID Connect with three quirks.
 *
 * - Multi-tenant (`organizations`, `common`): the discovery document names the issuer
 *   `https://login.microsoftonline.com/{tenantid}/v2.0`. openid-client knows this template: discovered
 *   from login.microsoftonline.com, it checks each ID token's `iss` against the template with the
 *   token's own `tid` put in. The admission judge (accounts/admission.ts) then checks `tid` against
 *   the tenants admitted (`tenants`; the consumer tenant of personal accounts only when listed), at
 *   sign-in, at every refresh and whenever the rules change.
 * - Group overage: past 200 groups, the ID token carries `_claim_names.groups` instead of `groups`;
 *   the groups are then read from Microsoft Graph (`/me/transitiveMemberOf`, every page) with the
 *   access token. The endpoint the token names in `_claim_sources` is never called: only the
 *   configured Graph is (Threat: a token sending the access token elsewhere).
 * - No `email_verified`: an email counts as verified only when Entra says its domain is verified by
 *   the tenant (the optional claim `xms_edov`, mapped as emailVerified), or when the operator vouches
 *   for the tenant (`assumeEmailVerified`). The email claim is otherwise any value a tenant admin typed.
 */
export const connectEntra = connectOidc<Entra>({
  // Switching account opens Microsoft's account picker.
  chooseAccountPrompt: 'select_account',
  async discover(provider, discover) {
    if (!provider.loopbackStandIn) return discover();
    const configuration = await discover({ fetch: standInFetch(provider) });
    // The stand-in's browser endpoint is plain http on loopback (tests only, loopback by the schema).
    client.allowInsecureRequests(configuration);
    return configuration;
  },
  checkIdToken(provider, claims) {
    if (typeof claims.tid !== 'string' || claims.tid.length === 0) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('Entra ID token without tid') });
    }
  },
  // Threat: a person of any other Entra ID tenant (or a personal Microsoft account) signing in to a
  // multi-tenant app. Which tenants are admitted is the admission judge's rule (accounts/admission.ts).
  // A refresh without an ID token carries no tid: the identity keeps the tenant it had (an Entra
  // subject lives in one tenant).
  facts: (_provider, idToken) => (idToken && typeof idToken.tid === 'string' ? { tenant: idToken.tid.toLowerCase() } : {}),
  expectedIssuer: (_provider, claims, discovered) => (typeof claims.tid === 'string' ? discovered.replace('{tenantid}', claims.tid) : discovered),
  async resolveClaims(provider, claims, accessToken) {
    if (!provider.resolveGroupOverage || !hasGroupOverage(claims, provider.claims.groups)) return {};
    return { [provider.claims.groups]: await graphGroups(provider, accessToken) };
  },
  // Entra's v2.0 endpoint sends no logout tokens (it has front-channel logout only).
  backchannelLogout: false,
});

/** `_claim_names: { groups: "src1" }` (OIDC Core §5.6.2, distributed claims): the groups did not fit in the token. */
function hasGroupOverage(claims: Claims, groupsClaim: string): boolean {
  const names = claims._claim_names;
  return typeof names === 'object' && names !== null && groupsClaim in names && claims[groupsClaim] === undefined;
}

/**
 * Every group the person is a member of, directly or through nested groups (Microsoft Graph
 * `GET /me/transitiveMemberOf/microsoft.graph.group`, following `@odata.nextLink` on the same Graph only).
 * Needs the delegated permission GroupMember.Read.All in the access token's scopes.
 */
async function graphGroups(provider: Entra, accessToken: string): Promise<string[]> {
  const fetchGraph = provider.loopbackStandIn ? standInFetch(provider) : fetch;
  const groups: string[] = [];
  let next: string | undefined = `${provider.graphUrl}/v1.0/me/transitiveMemberOf/microsoft.graph.group?$select=id&$top=999`;
  for (let page = 0; next && page < MAX_PAGES && groups.length <= MAX_GROUPS; page++) {
    let response: Response;
    try {
      response = await fetchGraph(next, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, signal: AbortSignal.timeout(IDP_TIMEOUT_SECONDS * 1000) });
    } catch (error) {
      throw new AppError('provider_unavailable', { params: { provider: provider.name }, cause: error instanceof Error && isNetworkError(error) ? error : new Error('Microsoft Graph did not answer', { cause: error }) });
    }
    if (!response.ok) throw graphFailure(provider, response);
    const body = (await response.json().catch(() => undefined)) as { value?: unknown; '@odata.nextLink'?: unknown } | undefined;
    if (!body || !Array.isArray(body.value)) throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('Microsoft Graph answered without a value list') });
    for (const item of body.value) if (typeof (item as { id?: unknown })?.id === 'string') groups.push((item as { id: string }).id);
    const link = body['@odata.nextLink'];
    next = undefined;
    if (typeof link === 'string') {
      // Threat: a nextLink elsewhere would receive the person's access token.
      if (!URL.canParse(link) || new URL(link).origin !== new URL(provider.graphUrl).origin) {
        throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('Microsoft Graph nextLink to another origin') });
      }
      next = link;
    }
  }
  // Fewer groups than there are would leave out the very group a deny rule names: all or nothing.
  if (next) throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('more groups in Microsoft Graph than Gatehouse keeps') });
  return groups;
}

/**
 * Graph's refusals: 401 (token revoked or expired) and 403 (the app lacks GroupMember.Read.All, or no
 * admin consent) fail the sign-in — the groups cannot be known, so nothing is decided on a part of
 * them; 429 and 5xx mean "not now" (a refresh keeps the session and tries again later).
 */
function graphFailure(provider: Entra, response: Response): AppError {
  const params = { provider: provider.name };
  const cause = new Error(`Microsoft Graph answered HTTP ${response.status}`);
  if (response.status === 429 || response.status >= 500) return new AppError('provider_unavailable', { params, cause });
  if (response.status === 403) {
    return new AppError('sign_in_denied', { params: { ...params, reason: 'Microsoft Graph refused to list your groups (the app needs the GroupMember.Read.All permission)' }, cause });
  }
  return new AppError('sign_in_denied', { params: { ...params, reason: 'Microsoft Graph did not accept the sign-in to list your groups' }, cause });
}

/** Tests only (loopbackStandIn, loopback by the schema): Microsoft's hosts answered by a local stand-in, paths kept. */
function standInFetch(provider: Entra): client.CustomFetch & typeof fetch {
  const standIn = new URL(provider.loopbackStandIn!);
  const routed = new Set([new URL(provider.authority).origin, new URL(provider.graphUrl).origin]);
  return ((input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (routed.has(url.origin)) {
      url.protocol = standIn.protocol;
      url.host = standIn.host;
    }
    return fetch(url, init);
  }) as client.CustomFetch & typeof fetch;
}
