import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { freePort } from '../../support/ports.js';

/**
 * An IdP that misbehaves on purpose, for the answers a real IdP will not produce: ID tokens signed with
 * a key it does not publish, for another audience or issuer, from the future, with the wrong nonce, or
 * an authorization response naming another issuer (mix-up). Everything else is plain OIDC.
 */
export type HostileMode =
  | 'honest'
  | 'wrong-key'
  | 'wrong-issuer'
  | 'wrong-audience'
  | 'future-iat'
  | 'wrong-nonce'
  | 'unsigned'
  | 'mix-up-iss'
  | 'userinfo-other-sub';

/** How the token endpoint answers a refresh_token grant. */
export type RefreshMode = 'honest' | 'invalid_grant' | 'other-subject' | 'unavailable';

export interface HostileIdp {
  issuer: string;
  mode: HostileMode;
  refreshMode: RefreshMode;
  /** The IdP session id put into ID tokens (`sid`), for back-channel logout tests. */
  sid: string;
  /** The subject of ID tokens and userinfo (`mallory`). */
  subject: string;
  /** Claims added to (or replacing) the ID token's and userinfo's own, e.g. a hostile `email`. */
  extraClaims: Record<string, unknown>;
  /** Claims added to (or replacing) userinfo's only: an answer that says something else than the ID token. */
  userinfoClaims: Record<string, unknown>;
  /** Signs a logout token with the published key (or, with `impostor`, a key nobody published). */
  signLogoutToken(claims: Record<string, unknown>, options?: { key?: 'published' | 'impostor'; typ?: string }): Promise<string>;
  /** A token that claims alg "none" (unsigned). */
  unsignedToken(claims: Record<string, unknown>): string;
  /** A token MACed with the client secret: the RS/HS algorithm-confusion attack. */
  hmacToken(claims: Record<string, unknown>, secret: string): Promise<string>;
  close(): Promise<void>;
}

export async function startHostileIdp(clientId: string): Promise<HostileIdp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const published = await generateKeyPair('ES256');
  const impostor = await generateKeyPair('ES256');
  const publicJwk: JWK = { ...(await exportJWK(published.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const pending = new Map<string, { nonce: string }>();

  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const state: HostileIdp = {
    issuer,
    mode: 'honest',
    refreshMode: 'honest',
    sid: 'sid-1',
    subject: 'mallory',
    extraClaims: {},
    userinfoClaims: {},
    signLogoutToken: (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: options.typ ?? 'logout+jwt' })
        .sign(options.key === 'impostor' ? impostor.privateKey : published.privateKey),
    unsignedToken: (claims) => `${encode({ alg: 'none', typ: 'logout+jwt' })}.${encode(claims)}.`,
    hmacToken: (claims, secret) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k1', typ: 'logout+jwt' }).sign(new TextEncoder().encode(secret)),
    close: async () => {},
  };

  const idToken = async (nonce: string | undefined, subject = state.subject): Promise<string> => {
    const mode = state.mode;
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      ...(nonce === undefined ? {} : { nonce: mode === 'wrong-nonce' ? 'not-the-nonce' : nonce }),
      email: 'mallory@example.com',
      email_verified: true,
      sid: state.sid,
      ...state.extraClaims,
    };
    if (mode === 'unsigned') {
      return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ ...claims, iss: issuer, aud: clientId, sub: subject, iat: now, exp: now + 300 })}.`;
    }
    const key: CryptoKey = mode === 'wrong-key' ? impostor.privateKey : published.privateKey;
    const iat = mode === 'future-iat' ? now + 3600 : now;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(mode === 'wrong-issuer' ? 'https://evil.example' : issuer)
      .setAudience(mode === 'wrong-audience' ? 'someone-else' : clientId)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 300)
      .sign(key);
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', issuer);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/userinfo`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (url.pathname === '/jwks') return json(200, { keys: [publicJwk] });
    if (url.pathname === '/authorize') {
      const code = `code-${Math.random().toString(36).slice(2)}`;
      pending.set(code, { nonce: url.searchParams.get('nonce') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', state.mode === 'mix-up-iss' ? 'http://localhost:4181' : issuer);
      response.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/token' && request.method === 'POST') {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const form = new URLSearchParams(body);
        const refreshToken = `rt-${Math.random().toString(36).slice(2)}`;
        if (form.get('grant_type') === 'refresh_token') {
          if (state.refreshMode === 'invalid_grant') return json(400, { error: 'invalid_grant', error_description: 'grant revoked' });
          if (state.refreshMode === 'unavailable') return json(503, { error: 'temporarily_unavailable' });
          const subject = state.refreshMode === 'other-subject' ? 'someone-else' : 'mallory';
          void idToken(undefined, subject).then((token) =>
            json(200, { access_token: 'at2', token_type: 'Bearer', expires_in: 300, id_token: token, refresh_token: refreshToken }),
          );
          return;
        }
        const code = form.get('code') ?? '';
        const grant = pending.get(code);
        pending.delete(code);
        if (!grant) return json(400, { error: 'invalid_grant' });
        void idToken(grant.nonce).then((token) =>
          json(200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: token, refresh_token: refreshToken }),
        );
      });
      return;
    }
    if (url.pathname === '/userinfo') {
      return json(200, { email: 'mallory@example.com', email_verified: true, ...state.extraClaims, ...state.userinfoClaims, sub: state.mode === 'userinfo-other-sub' ? 'someone-else' : state.subject });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}
