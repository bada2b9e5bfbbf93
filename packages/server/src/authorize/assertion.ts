import { sign, type KeyObject } from 'node:crypto';
import { ASSERTION_ALG, type SigningKeys } from '../keys/signingKeys.js';

export interface AssertionSubject {
  userId: string;
  email: string;
  name: string;
  groups: readonly string[];
}

const LIFETIME_SECONDS = 5 * 60;
/** A cached assertion is reused while it has at least this long to live. */
const REUSE_MARGIN_SECONDS = 60;

/**
 * Signs the `X-Gatehouse-Assertion` JWT an app can verify with /.gatehouse/jwks.json: iss the portal,
 * aud the app origin, sub the user, 5 minutes. One ES256 signature costs more CPU than a whole proxied
 * request, so an assertion is reused per (session, app) and re-signed only near expiry.
 *
 * The reuse lives beside the resolved session object it was signed for (the session cache's value,
 * sessions/sessionResolver.ts), in a WeakMap: it is sized with the session cache and goes when its entry
 * goes (evicted, expired, or invalidated by a revocation or a claims change on any node, which makes a
 * new object), with nothing to look up or forget here. A fixed-size map of its own would either hold
 * assertions of sessions the cache dropped long ago or, below the cache's size, re-sign on every check
 * of a large organisation's sessions. A session's last-seen update makes a new object too: its
 * assertions are then signed again, at most once per touch interval (60 s) per session and app.
 */
export class AssertionSigner {
  private readonly reused = new WeakMap<WeakKey, Map<string, { jwt: string; exp: number; groups: readonly string[] }>>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** The assertion for `subject` at `audience`, reused while `holder` (the resolved session it was made from) is. */
  assertion(holder: WeakKey, subject: AssertionSubject, audience: string): string {
    const now = this.nowSeconds();
    let byAudience = this.reused.get(holder);
    const cached = byAudience?.get(audience);
    // The groups that count can change without new claims (a provider's trust changed in the console):
    // an assertion is reused only while it says the same.
    if (cached && cached.exp - now > REUSE_MARGIN_SECONDS && sameGroups(cached.groups, subject.groups)) return cached.jwt;
    const { kid, privateKeyObject } = this.keys.current();
    const exp = now + LIFETIME_SECONDS;
    const jwt = signEs256({ alg: ASSERTION_ALG, kid, typ: 'JWT' }, { email: subject.email, name: subject.name, groups: [...subject.groups], iss: this.issuer, aud: audience, sub: subject.userId, iat: now, exp }, privateKeyObject);
    if (!byAudience) this.reused.set(holder, (byAudience = new Map()));
    byAudience.set(audience, { jwt, exp, groups: subject.groups });
    return jwt;
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
