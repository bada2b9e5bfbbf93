import { createHash, randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { OidcClientCatalogue } from './clients.js';
import { derivedKey } from './configuration.js';
import type { OpStore } from './opStore.js';

/**
 * The way back to an app after an RP-initiated logout that went through the upstream IdP's logout
 * (OpenID Connect RP-Initiated Logout 1.0, twice: the app → Gatehouse, Gatehouse → the IdP). The IdP
 * sends the browser back to Gatehouse's /signed-out, not to the app, so what the app asked for (its
 * registered post-logout URI and its `state`) travels as a continuation:
 * - signed (HS256, a key of its own derived from the server's key): nobody can make one that sends a
 *   browser anywhere (threat: an open redirect through /signed-out);
 * - in an HttpOnly cookie, and bound to the `state` Gatehouse sent the IdP, which the IdP sends back and
 *   the sign-out state cookie holds (authenticate/signOut.ts): it is redeemed only in the browser that
 *   signed out, and only at the end of that trip (threat: a continuation carried to another browser);
 * - single-use: its jti is recorded in the OP's storage, on the database, so no node redeems it twice
 *   (threat: a replayed continuation);
 * - short-lived (10 minutes: the IdP's logout page, a slow IdP);
 * - and the post-logout URI is checked again against the app's registered list when it is redeemed:
 *   an app edited meanwhile (the URI removed, the app deleted) sends nobody there.
 */

/** As long as the sign-out state cookie lives (authenticate/signOut.ts). */
export const CONTINUATION_SECONDS = 10 * 60;
/** Its own JWT type: no other token Gatehouse signs can pass as one (RFC 8725 §3.11). */
const TYPE = 'gatehouse-logout-continuation+jwt';
/** The model under which redeemed jtis are kept in the OP's storage (op_payloads), until they expire. */
export const REDEEMED_MODEL = 'LogoutContinuation';

export interface ContinuationToIssue {
  clientId: string;
  /** One of the client's registered post-logout URIs (oidc-provider checked it). */
  postLogoutRedirectUri: string;
  /** The app's `state`, given back to it as it was sent. */
  state: string | undefined;
  /** The `state` sent to the IdP's end-session endpoint. */
  idpState: string;
}

export type Redeemed = { location: string } | { refused: string };

export interface LogoutContinuationDeps {
  /** The server's key (secrets.cookieKey). */
  secretKey: Buffer;
  /** The OP's issuer, the portal's origin. */
  issuer: string;
  clients: Pick<OidcClientCatalogue, 'client'>;
  /** Where redeemed jtis are recorded (provide/opStore.ts). */
  redeemed: Pick<OpStore, 'insertPayloadOnce'>;
  now?: () => number;
}

export interface LogoutContinuations {
  issue(continuation: ContinuationToIssue): Promise<string>;
  /** The app's post-logout URI with its state, or why not. `idpState`: the state the IdP sent back, already matched with the browser's cookie. */
  redeem(token: string, idpState: string): Promise<Redeemed>;
}

const stateHash = (state: string) => createHash('sha256').update(state, 'utf8').digest('base64url');

export function logoutContinuations(deps: LogoutContinuationDeps): LogoutContinuations {
  const key = derivedKey(deps.secretKey, 'logout-continuation');
  const now = deps.now ?? Date.now;
  const audience = `${deps.issuer}/signed-out`;
  return {
    async issue({ clientId, postLogoutRedirectUri, state, idpState }) {
      const at = Math.floor(now() / 1000);
      return new SignJWT({ cid: clientId, uri: postLogoutRedirectUri, ...(state !== undefined ? { st: state } : {}), bnd: stateHash(idpState) })
        .setProtectedHeader({ alg: 'HS256', typ: TYPE })
        .setIssuer(deps.issuer)
        .setAudience(audience)
        .setJti(randomBytes(16).toString('base64url'))
        .setIssuedAt(at)
        .setExpirationTime(at + CONTINUATION_SECONDS)
        .sign(key);
    },

    async redeem(token, idpState) {
      let payload;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          typ: TYPE,
          issuer: deps.issuer,
          audience,
          requiredClaims: ['jti', 'exp', 'cid', 'uri', 'bnd'],
          currentDate: new Date(now()),
        }));
      } catch {
        return { refused: 'not a valid continuation (forged, altered or expired)' };
      }
      const { cid, uri, st, bnd, jti, exp } = payload as { cid: unknown; uri: unknown; st?: unknown; bnd: unknown; jti: string; exp: number };
      if (typeof cid !== 'string' || typeof uri !== 'string' || typeof bnd !== 'string' || (st !== undefined && typeof st !== 'string')) return { refused: 'malformed continuation' };
      if (bnd !== stateHash(idpState)) return { refused: 'the continuation belongs to another sign-out' };
      // The registered list as it is now: the URI must still be one of the app's.
      const found = deps.clients.client(cid);
      if (!found || !found.oidc.postLogoutRedirectUris.includes(uri)) return { refused: 'the post-logout URI is no longer registered for the app' };
      const left = exp - Math.floor(now() / 1000);
      if (!(await deps.redeemed.insertPayloadOnce(REDEEMED_MODEL, jti, { payload: '{}', expiresIn: Math.max(1, left) }))) return { refused: 'the continuation was used already' };
      // As oidc-provider builds it (RP-Initiated Logout 1.0 §3): the registered URI, with state added.
      const location = new URL(uri);
      if (st !== undefined) location.searchParams.set('state', st);
      return { location: location.href };
    },
  };
}
