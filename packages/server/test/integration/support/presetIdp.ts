import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { freePort } from '../../support/ports.js';

/**
 * A stand-in for an IdP that cannot be reached from a test (Google, Microsoft Entra ID and Microsoft
 * Graph), answering as that provider's documentation says it does: its discovery document (Entra's
 * multi-tenant one names the `{tenantid}` template), ID tokens with its claims (Google's `hd`, Entra's
 * `tid` and group overage), refresh, and Graph's `/me/transitiveMemberOf` with paging and its failure
 * answers (401 revoked token, 403 missing permission, 429 rate limited). The authorization endpoint
 * signs the person in at once (no login page): what is tested is what Gatehouse does with the answer.
 */
export interface PresetIdp {
  /** This stand-in's loopback origin. */
  origin: string;
  /** The claims of the next ID token (and of refreshed ones): sub, email, hd, tid, groups, _claim_names, ... */
  claims: Record<string, unknown>;
  /** The query of the last authorization request. */
  lastAuthorization: URLSearchParams | undefined;
  refreshMode: 'honest' | 'invalid_grant';
  /** The tenant an ID token's iss names instead of its own tid's (a token of one tenant claiming another's issuer). */
  issuerTenant: string | undefined;
  graph: { mode: 'ok' | 'revoked' | 'forbidden' | 'rate-limited'; groups: string[]; pageSize: number; nextLinkOrigin?: string; requests: number };
  close(): Promise<void>;
}

export interface PresetIdpOptions {
  clientId: string;
  /**
   * The issuer as the discovery document names it and as ID tokens carry it (with `{tenantid}` put in
   * from the token's tid). Default: the stand-in's own origin.
   */
  issuer?: (origin: string) => string;
  /** Where requests arrive routed from (Entra: https://login.microsoftonline.com); endpoints other than the browser's are named there. */
  servedAs?: string;
  /** Whether the IdP has a userinfo endpoint (Entra's v2.0 ID token is the profile: none here). */
  userinfo?: boolean;
}

export async function startPresetIdp(options: PresetIdpOptions): Promise<PresetIdp> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const issuerTemplate = options.issuer?.(origin) ?? origin;
  const servedAs = options.servedAs ?? origin;
  const keys = await generateKeyPair('RS256');
  const publicJwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'stand-in-1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { nonce: string }>();
  const accessTokens = new Set<string>();

  const state: PresetIdp = {
    origin,
    claims: { sub: 'ada', email: 'ada@example.com', email_verified: true, name: 'Ada' },
    lastAuthorization: undefined,
    refreshMode: 'honest',
    issuerTenant: undefined,
    graph: { mode: 'ok', groups: [], pageSize: 100, requests: 0 },
    close: async () => {},
  };

  const idToken = (nonce: string | undefined) => {
    const now = Math.floor(Date.now() / 1000);
    const { sub, ...claims } = state.claims;
    const issuer = issuerTemplate.replace('{tenantid}', String(state.issuerTenant ?? state.claims.tid));
    return new SignJWT({ ...claims, ...(nonce === undefined ? {} : { nonce }) })
      .setProtectedHeader({ alg: 'RS256', kid: 'stand-in-1', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(options.clientId)
      .setSubject(String(sub))
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(keys.privateKey);
  };

  const tokens = async (nonce: string | undefined) => {
    const accessToken = `at-${crypto.randomUUID()}`;
    accessTokens.add(accessToken);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, id_token: await idToken(nonce), refresh_token: `rt-${crypto.randomUUID()}` };
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', origin);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (url.pathname.endsWith('/.well-known/openid-configuration')) {
      return json(200, {
        issuer: issuerTemplate,
        // The browser goes to the stand-in itself; server-to-server endpoints are named where Gatehouse
        // believes they are (routed here in tests).
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${servedAs}/token`,
        ...(options.userinfo === false ? {} : { userinfo_endpoint: `${servedAs}/userinfo` }),
        jwks_uri: `${servedAs}/keys`,
        response_types_supported: ['code'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: ['openid', 'email', 'profile', 'offline_access'],
      });
    }
    if (url.pathname === '/keys') return json(200, { keys: [publicJwk] });
    if (url.pathname === '/authorize') {
      state.lastAuthorization = url.searchParams;
      const code = `code-${crypto.randomUUID()}`;
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      response.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/token' && request.method === 'POST') {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') === 'refresh_token') {
          // Entra's answer to a revoked refresh token (AADSTS50173 and the like) is invalid_grant.
          if (state.refreshMode === 'invalid_grant') return json(400, { error: 'invalid_grant', error_description: 'The refresh token has been revoked.' });
          void tokens(undefined).then((answer) => json(200, answer));
          return;
        }
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!grant) return json(400, { error: 'invalid_grant' });
        void tokens(grant.nonce).then((answer) => json(200, answer));
      });
      return;
    }
    if (url.pathname === '/userinfo') {
      const { sub, ...claims } = state.claims;
      return json(200, { ...claims, sub });
    }
    if (url.pathname === '/v1.0/me/transitiveMemberOf/microsoft.graph.group') {
      state.graph.requests++;
      const token = request.headers.authorization?.replace(/^Bearer /, '');
      if (!token || !accessTokens.has(token) || state.graph.mode === 'revoked') {
        return json(401, { error: { code: 'InvalidAuthenticationToken', message: 'Access token has expired or is not yet valid.' } });
      }
      if (state.graph.mode === 'forbidden') return json(403, { error: { code: 'Authorization_RequestDenied', message: 'Insufficient privileges to complete the operation.' } });
      if (state.graph.mode === 'rate-limited') return json(429, { error: { code: 'TooManyRequests', message: 'Too many requests.' } }, { 'retry-after': '10' });
      const skip = Number(url.searchParams.get('$skiptoken') ?? 0);
      const page = state.graph.groups.slice(skip, skip + state.graph.pageSize);
      const more = skip + page.length < state.graph.groups.length;
      const nextLink = new URL(`${state.graph.nextLinkOrigin ?? 'https://graph.microsoft.com'}/v1.0/me/transitiveMemberOf/microsoft.graph.group`);
      nextLink.searchParams.set('$skiptoken', String(skip + page.length));
      return json(200, {
        '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#directoryObjects',
        value: page.map((id) => ({ '@odata.type': '#microsoft.graph.group', id })),
        ...(more ? { '@odata.nextLink': nextLink.href } : {}),
      });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}
