/**
 * Verifying a logout token (OpenID Connect Back-Channel Logout 1.0 §2.6), with `jose` only. A logout
 * token ends sessions, so a forged, misaddressed or replayed one is a way to sign people out of the app
 * at will: every check below answers one of those threats.
 */
import { jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** The event a logout token must carry (§2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

export interface LogoutTokenCheck {
  issuer: string;
  /** The app's client id: a logout token is addressed to exactly one client (`aud`). */
  clientId: string;
  /** The OP's published keys (its JWKS), e.g. `createRemoteJWKSet(jwks_uri)`. */
  keys: JWTVerifyGetKey;
}

export interface LogoutSubject {
  jti: string;
  /** Unix seconds: how long the jti must be remembered to refuse a replay. */
  exp: number;
  sid?: string;
  sub?: string;
}

export class InvalidLogoutToken extends Error {}

/**
 * The algorithms the OP signs ID tokens (and so logout tokens) with; fixed here, never read from the
 * token's header: no `none`, no HMAC keyed with a public key (RFC 8725 §3.1).
 */
const ALGORITHMS = ['RS256', 'ES256'];

/** A logout token older than this is refused even if its `exp` says otherwise: it bounds the replay cache. */
const MAX_AGE = '10 minutes';

export async function verifyLogoutToken(token: string, check: LogoutTokenCheck): Promise<LogoutSubject> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, check.keys, {
      issuer: check.issuer,
      audience: check.clientId,
      algorithms: ALGORITHMS,
      // Explicit typing (§2.4): an ID token or another JWT of the OP's cannot pass as a logout token.
      typ: 'logout+jwt',
      requiredClaims: ['iat', 'exp', 'jti'],
      maxTokenAge: MAX_AGE,
      clockTolerance: 30,
    }));
  } catch (error) {
    throw new InvalidLogoutToken(error instanceof Error ? error.message : 'not a valid JWT');
  }
  // §2.4: the events claim holds the back-channel logout event, whose value is a JSON object.
  const events = payload.events as Record<string, unknown> | undefined;
  const event = events && typeof events === 'object' ? events[BACKCHANNEL_LOGOUT_EVENT] : undefined;
  if (!event || typeof event !== 'object' || Array.isArray(event)) {
    throw new InvalidLogoutToken(`the events claim must hold ${BACKCHANNEL_LOGOUT_EVENT}`);
  }
  // §2.4: a nonce is prohibited, so an ID token (which carries one) is never taken for a logout token.
  if ('nonce' in payload) throw new InvalidLogoutToken('a logout token must not contain a nonce');
  const sid = typeof payload.sid === 'string' && payload.sid ? payload.sid : undefined;
  const sub = typeof payload.sub === 'string' && payload.sub ? payload.sub : undefined;
  if (!sid && !sub) throw new InvalidLogoutToken('a logout token must name a sid or a sub');
  if (typeof payload.jti !== 'string' || !payload.jti) throw new InvalidLogoutToken('the jti claim must be a string');
  return { jti: payload.jti, exp: payload.exp!, ...(sid ? { sid } : {}), ...(sub ? { sub } : {}) };
}

/**
 * The jtis of the logout tokens already acted on, each kept until its token expires (§2.6 step 8: a
 * replayed token is refused). In memory: the demo's sessions are in memory too.
 */
export class SeenJtis {
  private readonly seen = new Map<string, number>();

  /** Records the jti; false if it was seen before. */
  firstSight(jti: string, exp: number, nowSeconds = Date.now() / 1000): boolean {
    for (const [known, until] of this.seen) if (until < nowSeconds) this.seen.delete(known);
    if (this.seen.has(jti)) return false;
    // Kept past exp by the clock tolerance the check allows.
    this.seen.set(jti, exp + 30);
    return true;
  }
}
