import { parseEmail } from '@gatehouse/contract';
import type { ProviderConfig } from '../config/schema.js';

/** What Gatehouse keeps of an IdP's claims: the minimum it needs, validated and bounded. */
export interface IdentityProfile {
  subject: string;
  /** Canonical (the contract's definitions/email.ts), or undefined when the IdP sent none or one that is refused. */
  email: string | undefined;
  /** Why the IdP's email was refused (too long, several `@`, non-ASCII, ...); the sign-in rules say so. */
  emailProblem?: string | undefined;
  /** The IdP has an email for the person but does not say it is verified, and did not hand it over (GitHub). */
  emailUnverified?: boolean | undefined;
  emailVerified: boolean;
  name: string | undefined;
  picture: string | undefined;
  groups: string[];
  /** The IdP's session id, for back-channel logout. */
  sid: string | undefined;
  /** Other scalar claims, for policies of the form claim = value (bounded; protocol claims left out). */
  extra: Record<string, string | number | boolean | Array<string | number | boolean>>;
  /**
   * What a provider's own admission rules read (accounts/admission.ts), as this answer said it: kept
   * with the identity, so the rules can judge it again when an operator narrows them. A fact this
   * answer did not carry (a refresh without an ID token) is left out, not guessed.
   */
  facts?: AdmissionFacts | undefined;
}

/** The claims a provider kind's admission rules read, beside the email every kind's rules read. */
export interface AdmissionFacts {
  /** Google: the Workspace domain (`hd`), lower-cased; null when the ID token names none (a personal account). */
  hostedDomain?: string | null | undefined;
  /** Entra ID: the tenant of the account (`tid`), lower-cased. */
  tenant?: string | undefined;
  /** GitHub: the organisations (logins, lower-cased) the account is a member of, as far as they count. */
  organizations?: string[] | undefined;
}

/** Protocol and token-binding claims: never policy inputs, never stored. */
const PROTOCOL_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'c_hash', 's_hash', 'sid', 'jti', 'cnf', '_claim_names', '_claim_sources']);
const MAX_EXTRA_CLAIMS = 50;

const MAX_GROUPS = 500;
const MAX_VALUE = 256;
/** A picture URL is kept whole or not at all (a cut URL is another URL). */
const MAX_URL = 2048;

/**
 * Reads the profile through the provider's claim mapping. Userinfo may add to the ID token's claims but
 * never changes the subject (openid-client already checked that userinfo's `sub` matches).
 *
 * Threat: an email vouched for by another answer. The ID token and userinfo are two answers; an email
 * counts as verified only with the verification that came with it. Userinfo's email (when it sends
 * one) is the address, and only userinfo's `email_verified` says it is verified — never the ID token's
 * `email_verified: true` about whatever address the ID token named. (Where both answers name the same
 * address, the ID token's word on it holds: it is the same claim value.)
 */
export function mapClaims(
  provider: Pick<ProviderConfig, 'claims' | 'assumeEmailVerified'>,
  idToken: Record<string, unknown>,
  userinfo: Record<string, unknown> = {},
): IdentityProfile {
  const claims: Record<string, unknown> = { ...idToken, ...userinfo, sub: idToken.sub };
  refuseNul({ ...claims, sid: idToken.sid });
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 255) {
    throw new TypeError('the ID token has no usable sub claim');
  }
  const mapping = provider.claims;
  const emailAnswer = present(userinfo[mapping.email]) ? userinfo : idToken;
  // Threat: an over-long email ("aaa…a@example.com.attacker.org") once cut to 256 characters read as
  // "…@example.com" and passed domain rules. The value is checked whole, and refused rather than mended.
  const rawEmail = emailAnswer[mapping.email];
  const email = rawEmail === undefined || rawEmail === null || rawEmail === '' ? undefined : parseEmail(rawEmail);
  let verifiedClaim = emailAnswer[mapping.emailVerified];
  if (verifiedClaim === undefined && emailAnswer === userinfo && idToken[mapping.email] === rawEmail) verifiedClaim = idToken[mapping.emailVerified];
  return {
    subject,
    email: email?.ok ? email.email : undefined,
    ...(email && !email.ok ? { emailProblem: email.reason } : {}),
    // OIDC Core §5.1: email_verified is a boolean; some IdPs send the string "true".
    emailVerified: verifiedClaim === true || verifiedClaim === 'true' || (verifiedClaim === undefined && provider.assumeEmailVerified),
    name: displayText(claims[mapping.name]),
    picture: httpsUrl(claims[mapping.picture]),
    groups: groups(claims[mapping.groups]),
    sid: exactText(idToken.sid),
    extra: extraClaims(claims, mapping),
  };
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Threat: a NUL character in a claim — the subject, an email, a name, a group, the IdP's sid, any
 * other value kept. No identifier or name has one; PostgreSQL's text columns refuse it (a 500 there,
 * where SQLite would store it), and a C-string reader further on (a header, a log tool, an app) would
 * read "admins\0x" as "admins". Such an answer is refused whole, like any other that fails verification.
 */
function refuseNul(claims: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(claims)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((item) => typeof item === 'string' && item.includes('\u0000'))) throw new TypeError(`the ${name} claim contains a NUL character`);
  }
}

/**
 * The claims `claim = value` rules may read. Threat: a rule that reads groups or an email around the
 * checks made for them. Groups count only through group trust (accounts/effectiveGroups.ts) and an
 * email only once verified and admitted (accounts/admission.ts), so neither is ever an extra claim:
 * not `groups`, nothing named `email…`, nor the claims the provider maps them from.
 */
function extraClaims(claims: Record<string, unknown>, mapping: ProviderConfig['claims']): IdentityProfile['extra'] {
  const extra: IdentityProfile['extra'] = {};
  const withheld = new Set(['groups', mapping.groups, mapping.email, mapping.emailVerified]);
  let count = 0;
  for (const [name, value] of Object.entries(claims)) {
    if (PROTOCOL_CLAIMS.has(name) || withheld.has(name) || name.toLowerCase().startsWith('email') || count >= MAX_EXTRA_CLAIMS || name.length > 64) continue;
    const scalar = (item: unknown): item is string | number | boolean =>
      typeof item === 'boolean' || typeof item === 'number' || (typeof item === 'string' && item.length <= MAX_VALUE);
    if (scalar(value)) extra[name] = value;
    else if (Array.isArray(value) && value.length <= MAX_GROUPS && value.every(scalar)) extra[name] = value;
    else continue;
    count++;
  }
  return extra;
}

/**
 * A name to show: surrounding spaces are dropped (they carry no meaning in a display name), but a value
 * too long is dropped whole rather than cut, like every other claim here.
 */
function displayText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= MAX_VALUE ? trimmed : undefined;
}

/**
 * A value compared as an identifier (a group, the IdP's sid): kept exactly as the IdP sent it or not at
 * all. Never trimmed or cut: " admins" or a 300-character group cut at 256 could equal another group.
 */
function exactText(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_VALUE) return undefined;
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value) || value.trim().length === 0) return undefined;
  return value;
}

function httpsUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL) return undefined;
  try {
    const url = new URL(value);
    // What was checked is what is kept: the parsed form, not the raw text.
    return url.protocol === 'https:' && url.href.length <= MAX_URL ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The groups, each kept exactly or dropped (see exactText). More than MAX_GROUPS is refused outright:
 * keeping only the first ones could leave out the very group a deny rule names.
 */
function groups(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  if (list.length > MAX_GROUPS) throw new TypeError(`the groups claim lists more than ${MAX_GROUPS} groups`);
  const unique = new Set<string>();
  for (const item of list) {
    const group = exactText(item);
    if (group !== undefined) unique.add(group);
  }
  return [...unique];
}
