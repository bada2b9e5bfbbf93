import { sign, type KeyObject } from 'node:crypto';
import { ASSERTION_ALG, type SigningKeys } from '../keys/signingKeys.js';

export interface AssertionSubject {
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  groups: readonly string[];
}

const LIFETIME_SECONDS = 5 * 60;
/** A cached assertion is reused while it has at least this long to live. */
const REUSE_MARGIN_SECONDS = 60;
const MAX_CACHED = 10_000;

/**
 * Signs the `X-Gatehouse-Assertion` JWT an app can verify with /.gatehouse/jwks.json: iss the portal,
 * aud the app origin, sub the user, 5 minutes. One ES256 signature costs more CPU than a whole proxied
 * request, so assertions are cached per (session, app) and re-signed only near expiry.
 */
export class AssertionSigner {
  private readonly cache = new Map<string, { jwt: string; exp: number; groups: readonly string[] }>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async assertion(subject: AssertionSubject, audience: string): Promise<string> {
    const key = `${subject.sessionId}\u0000${audience}`;
    const now = this.nowSeconds();
    const cached = this.cache.get(key);
    // The groups that count can change without new claims (a provider's trust changed in the console):
    // an assertion is reused only while it says the same.
    if (cached && cached.exp - now > REUSE_MARGIN_SECONDS && sameGroups(cached.groups, subject.groups)) return cached.jwt;
    const { kid, privateKeyObject } = this.keys.current();
    const exp = now + LIFETIME_SECONDS;
    const jwt = signEs256({ alg: ASSERTION_ALG, kid, typ: 'JWT' }, { email: subject.email, name: subject.name, groups: [...subject.groups], iss: this.issuer, aud: audience, sub: subject.userId, iat: now, exp }, privateKeyObject);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { jwt, exp, groups: subject.groups });
    return jwt;
  }

  /** Drops a session's cached assertions (its claims changed or it ended). */
  forget(sessionId: string): void {
    const prefix = `${sessionId}\u0000`;
    for (const key of this.cache.keys()) if (key.startsWith(prefix)) this.cache.delete(key);
  }
  /** Drops every cached assertion (changes may have been missed). */
  forgetAll(): void {
    this.cache.clear();
  }

}

/**
 * A compact JWS (RFC 7515 §7.1) signed with ES256 (RFC 7518 §3.4: the P-256 signature as R || S, not
 * DER), synchronously. jose signs through WebCrypto, whose every signature is a thread-pool job and a
 * promise chain: about 140 µs of CPU a signature here against 45 for node:crypto's own, and an
 * assertion is signed on each session's first check (the cache miss's largest single cost). Tests
 * verify what this writes with jose (authorize/assertion tests).
 */
function signEs256(header: { alg: typeof ASSERTION_ALG; kid: string; typ: 'JWT' }, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}
