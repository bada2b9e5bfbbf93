import { ID_TOKEN_ALGORITHMS, OIDC_CLIENT_AUTHENTICATIONS, type AdminOidcClient, type OidcClientAuthentication, type OidcClientDefinitionInput, type OidcScope } from '@gatehouse/contract';
import { parseLines } from './lines';

/** How a client authenticates at the token endpoint, in the form's words. */
export const AUTHENTICATION_LABELS: Record<OidcClientAuthentication, string> = {
  client_secret_basic: 'Client secret, in the Authorization header (client_secret_basic)',
  client_secret_post: 'Client secret, in the request body (client_secret_post)',
  private_key_jwt: 'A JWT signed with the app’s own key (private_key_jwt)',
  none: 'None: a public client, a single-page or native app, with PKCE (none)',
};

export const AUTHENTICATION_CHOICES = OIDC_CLIENT_AUTHENTICATIONS.map((value) => ({ value, label: AUTHENTICATION_LABELS[value] }));
export const ID_TOKEN_ALGORITHM_CHOICES = ID_TOKEN_ALGORITHMS.map((value) => ({ value, label: value }));

/** Whether a client authenticates with a secret Gatehouse keeps. */
export function usesSecret(authentication: string): boolean {
  return authentication === 'client_secret_basic' || authentication === 'client_secret_post';
}

/** An app's oidc block as the form holds it: lists one per line, durations as typed ("10m"). */
export interface OidcFormValues {
  /** Empty: the app's id. */
  clientId: string;
  authentication: OidcClientAuthentication;
  redirectUris: string;
  postLogoutRedirectUris: string;
  backchannelLogoutUri: string;
  /** For private_key_jwt: where the app publishes its keys, or the keys themselves (JSON). */
  jwksUri: string;
  jwks: string;
  scopes: OidcScope[];
  thirdParty: boolean;
  subject: 'public' | 'pairwise';
  idTokenAlgorithm: (typeof ID_TOKEN_ALGORITHMS)[number];
  claimsInIdToken: boolean;
  accessTokenLifetime: string;
  idTokenLifetime: string;
  refreshTokenLifetime: string;
}

/** The schema's defaults, as the form shows them. */
export function emptyOidcForm(): OidcFormValues {
  return {
    clientId: '',
    authentication: 'client_secret_basic',
    redirectUris: '',
    postLogoutRedirectUris: '',
    backchannelLogoutUri: '',
    jwksUri: '',
    jwks: '',
    scopes: ['openid', 'profile', 'email', 'groups'],
    thirdParty: false,
    subject: 'public',
    idTokenAlgorithm: 'RS256',
    claimsInIdToken: true,
    accessTokenLifetime: '10m',
    idTokenLifetime: '1h',
    refreshTokenLifetime: '14d',
  };
}

const UNITS: Array<[string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** Milliseconds as the largest whole unit: 600000 → "10m", 90000 → "90s". */
export function durationText(ms: number): string {
  for (const [unit, size] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The form of an app's oidc block as the console shows it (the client id left empty when it is the app's id). */
export function oidcToForm(oidc: AdminOidcClient | OidcClientDefinitionInput, appId: string): OidcFormValues {
  const empty = emptyOidcForm();
  const duration = (value: unknown, fallback: string) => (typeof value === 'number' ? durationText(value) : typeof value === 'string' ? value : fallback);
  return {
    clientId: oidc.clientId === undefined || oidc.clientId === appId ? '' : oidc.clientId,
    authentication: oidc.authentication ?? empty.authentication,
    redirectUris: (oidc.redirectUris ?? []).join('\n'),
    postLogoutRedirectUris: (oidc.postLogoutRedirectUris ?? []).join('\n'),
    backchannelLogoutUri: oidc.backchannelLogoutUri ?? '',
    jwksUri: oidc.jwksUri ?? '',
    jwks: oidc.jwks ? JSON.stringify(oidc.jwks, null, 2) : '',
    scopes: oidc.scopes ? [...oidc.scopes] : empty.scopes,
    thirdParty: oidc.thirdParty ?? false,
    subject: oidc.subject ?? 'public',
    idTokenAlgorithm: oidc.idTokenAlgorithm ?? 'RS256',
    claimsInIdToken: oidc.claimsInIdToken ?? true,
    accessTokenLifetime: duration(oidc.accessTokenLifetime, empty.accessTokenLifetime),
    idTokenLifetime: duration(oidc.idTokenLifetime, empty.idTokenLifetime),
    refreshTokenLifetime: duration(oidc.refreshTokenLifetime, empty.refreshTokenLifetime),
  };
}

/** The JWKS as typed: parsed when it is JSON, else the text itself (for the schema to refuse, in words). */
function parsedJwks(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The oidc block to send; what is empty is left out (the server's defaults apply), validation is the contract's. */
export function formToOidc(form: OidcFormValues): OidcClientDefinitionInput {
  const jwtKeys = form.authentication === 'private_key_jwt';
  return {
    ...(form.clientId.trim() ? { clientId: form.clientId.trim() } : {}),
    authentication: form.authentication,
    redirectUris: parseLines(form.redirectUris),
    postLogoutRedirectUris: parseLines(form.postLogoutRedirectUris),
    ...(form.backchannelLogoutUri.trim() ? { backchannelLogoutUri: form.backchannelLogoutUri.trim() } : {}),
    ...(jwtKeys && form.jwksUri.trim() ? { jwksUri: form.jwksUri.trim() } : {}),
    ...(jwtKeys && form.jwks.trim() ? { jwks: parsedJwks(form.jwks.trim()) as OidcClientDefinitionInput['jwks'] } : {}),
    scopes: form.scopes,
    thirdParty: form.thirdParty,
    subject: form.subject,
    idTokenAlgorithm: form.idTokenAlgorithm,
    claimsInIdToken: form.claimsInIdToken,
    accessTokenLifetime: form.accessTokenLifetime.trim(),
    idTokenLifetime: form.idTokenLifetime.trim(),
    refreshTokenLifetime: form.refreshTokenLifetime.trim(),
  };
}
