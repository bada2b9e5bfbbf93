import type { ProviderConfig } from '../config/schema.js';

/** What Gatehouse keeps of an IdP's claims: the minimum it needs, validated and bounded. */
export interface IdentityProfile {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  picture: string | undefined;
  groups: string[];
  /** The IdP's session id, for back-channel logout. */
  sid: string | undefined;
  /** Other scalar claims, for policies of the form claim = value (bounded; protocol claims left out). */
  extra: Record<string, string | number | boolean | Array<string | number | boolean>>;
}

/** Protocol and token-binding claims: never policy inputs, never stored. */
const PROTOCOL_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'c_hash', 's_hash', 'sid', 'jti', 'cnf']);
const MAX_EXTRA_CLAIMS = 50;

const MAX_GROUPS = 500;
const MAX_VALUE = 256;

/**
 * Reads the profile through the provider's claim mapping. Userinfo may add to the ID token's claims but
 * never changes the subject (openid-client already checked that userinfo's `sub` matches).
 */
export function mapClaims(
  provider: Pick<ProviderConfig, 'claims' | 'assumeEmailVerified'>,
  idToken: Record<string, unknown>,
  userinfo: Record<string, unknown> = {},
): IdentityProfile {
  const claims: Record<string, unknown> = { ...idToken, ...userinfo, sub: idToken.sub };
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 255) {
    throw new TypeError('the ID token has no usable sub claim');
  }
  const email = text(claims[provider.claims.email])?.toLowerCase();
  const verifiedClaim = claims[provider.claims.emailVerified];
  return {
    subject,
    email: email && /^[^\s@]+@[^\s@]+$/.test(email) ? email : undefined,
    // OIDC Core §5.1: email_verified is a boolean; some IdPs send the string "true".
    emailVerified: verifiedClaim === true || verifiedClaim === 'true' || (verifiedClaim === undefined && provider.assumeEmailVerified),
    name: text(claims[provider.claims.name]),
    picture: httpsUrl(claims[provider.claims.picture]),
    groups: groups(claims[provider.claims.groups]),
    sid: text(idToken.sid),
    extra: extraClaims(claims),
  };
}

function extraClaims(claims: Record<string, unknown>): IdentityProfile['extra'] {
  const extra: IdentityProfile['extra'] = {};
  let count = 0;
  for (const [name, value] of Object.entries(claims)) {
    if (PROTOCOL_CLAIMS.has(name) || count >= MAX_EXTRA_CLAIMS || name.length > 64) continue;
    const scalar = (item: unknown): item is string | number | boolean =>
      typeof item === 'boolean' || typeof item === 'number' || (typeof item === 'string' && item.length <= MAX_VALUE);
    if (scalar(value)) extra[name] = value;
    else if (Array.isArray(value) && value.length <= MAX_GROUPS && value.every(scalar)) extra[name] = value;
    else continue;
    count++;
  }
  return extra;
}

function text(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed.slice(0, MAX_VALUE) : undefined;
}

function httpsUrl(value: unknown): string | undefined {
  const candidate = text(value);
  if (!candidate) return undefined;
  try {
    return new URL(candidate).protocol === 'https:' ? candidate : undefined;
  } catch {
    return undefined;
  }
}

function groups(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  const unique = new Set<string>();
  for (const item of list) {
    const group = text(item);
    if (group) unique.add(group);
    if (unique.size >= MAX_GROUPS) break;
  }
  return [...unique];
}
