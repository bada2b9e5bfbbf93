import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for GitHub, since the real one cannot be reached from tests: it answers as
 * GitHub's documentation says GitHub does — the OAuth app flow (`/login/oauth/authorize`,
 * `/login/oauth/access_token` with PKCE, errors as HTTP 200 with an `error` field), and the REST API
 * (`/user`, `/user/emails`, `/user/orgs`, `/user/teams`, paginated with a Link header, scopes in
 * X-OAuth-Scopes, 401 "Bad credentials" for a revoked token, rate limits as 403 with
 * x-ratelimit-remaining: 0 or 429 with retry-after).
 *
 * Layouts: `github.com` keeps its API on an origin of its own, at the root; `ghes` (GitHub Enterprise
 * Server) under `/api/v3` of its base URL.
 */
export interface GitHubTeam {
  org: string;
  slug: string;
}

export interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  avatarUrl: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
  orgs: string[];
  teams: GitHubTeam[];
}

/**
 * Failure answers of the API, switched on per test:
 * - `rate-limited`: 403 with x-ratelimit-remaining: 0 and x-ratelimit-reset (the primary limit);
 * - `secondary-rate-limit`: 429 with retry-after;
 * - `unavailable`: 503;
 * - `link-elsewhere`: a list's Link header names a next page on another host (hostile).
 */
export type ApiFailure = 'rate-limited' | 'secondary-rate-limit' | 'unavailable' | 'link-elsewhere';

export interface GitHubStandIn {
  layout: 'github.com' | 'ghes';
  /** The web origin (authorize, token endpoint). For `ghes`, also the base URL the API lives under. */
  webBase: string;
  /** The REST API's root. */
  apiBase: string;
  clientId: string;
  clientSecret: string;
  /** People, by login. */
  users: Map<string, GitHubUser>;
  /** Who the authorization page signs in (GitHub would ask the person; here a test chooses). */
  signInAs: string;
  /** The person refuses the app on the authorization page (error=access_denied). */
  denyAuthorization: boolean;
  /** Scopes the person does not grant though asked (the token lacks them). */
  withholdScopes: string[];
  /** The token endpoint answers this OAuth error, as GitHub does: HTTP 200 and `{ error, error_description }`. */
  tokenError: string | undefined;
  /** GitHub App with expiring user tokens: access tokens with expires_in, and a refresh token. */
  expiringTokens: boolean;
  apiFailure: ApiFailure | undefined;
  /** Every API request: path (with query) and the token it carried. */
  readonly apiRequests: Array<{ path: string; token: string | undefined }>;
  /** Revokes every token of a person (as they would in Settings → Applications). */
  revokeTokens(login: string): void;
  addUser(user: Partial<GitHubUser> & Pick<GitHubUser, 'login'>): GitHubUser;
  /** A token for a person straight away, as if they had signed in (for tests of the API client alone). */
  tokenFor(login: string, scopes?: string[]): string;
  close(): Promise<void>;
}

interface Grant {
  login: string;
  scopes: string[];
  redirectUri: string;
  codeChallenge: string | undefined;
  expiresAt: number;
}

interface Token {
  login: string;
  scopes: string[];
  expiresAt: number | undefined;
}

let nextUserId = 1000;

export async function startGitHubStandIn(layout: 'github.com' | 'ghes' = 'github.com'): Promise<GitHubStandIn> {
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, Token>();
  const refreshTokens = new Map<string, Token>();
  const web = createServer((request, response) => void handle(request, response, 'web'));
  const api = layout === 'github.com' ? createServer((request, response) => void handle(request, response, 'api')) : undefined;
  const webPort = await listen(web);
  const apiPort = api ? await listen(api) : webPort;
  const webBase = `http://127.0.0.1:${webPort}`;
  const apiPrefix = layout === 'ghes' ? '/api/v3' : '';
  const apiBase = `http://127.0.0.1:${apiPort}${apiPrefix}`;

  const state: GitHubStandIn = {
    layout,
    webBase,
    apiBase,
    clientId: 'Iv1.standin',
    clientSecret: 'stand-in-secret',
    users: new Map(),
    signInAs: 'octocat',
    denyAuthorization: false,
    withholdScopes: [],
    tokenError: undefined,
    expiringTokens: false,
    apiFailure: undefined,
    apiRequests: [],
    revokeTokens(login) {
      for (const [token, owner] of tokens) if (owner.login === login) tokens.delete(token);
      for (const [token, owner] of refreshTokens) if (owner.login === login) refreshTokens.delete(token);
    },
    addUser(user) {
      const full: GitHubUser = {
        id: nextUserId++,
        name: null,
        avatarUrl: `https://avatars.githubusercontent.com/u/${nextUserId}?v=4`,
        emails: [{ email: `${user.login}@example.com`, primary: true, verified: true }],
        orgs: [],
        teams: [],
        ...user,
      };
      state.users.set(full.login, full);
      return full;
    },
    tokenFor(login, scopes = ['read:user', 'user:email', 'read:org']) {
      return issue(login, scopes).access_token as string;
    },
    async close() {
      await Promise.all([web, api].filter((server): server is Server => server !== undefined).map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
  state.addUser({ login: 'octocat', name: 'The Octocat', orgs: ['acme'], teams: [{ org: 'acme', slug: 'platform' }] });

  async function handle(request: IncomingMessage, response: ServerResponse, side: 'web' | 'api'): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    try {
      if (side === 'web' && request.method === 'GET' && url.pathname === '/login/oauth/authorize') return authorize(url, response);
      if (side === 'web' && request.method === 'POST' && url.pathname === '/login/oauth/access_token') return await accessToken(request, response);
      const apiSide = layout === 'ghes' ? side === 'web' && url.pathname.startsWith('/api/v3/') : side === 'api';
      if (apiSide && request.method === 'GET') return apiCall(request, url, url.pathname.slice(apiPrefix.length), response);
      json(response, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    } catch (error) {
      json(response, 500, { message: String(error) });
    }
  }

  /** GitHub would show its consent page; the chosen person consents (or refuses) at once. */
  function authorize(url: URL, response: ServerResponse): void {
    const redirectUri = url.searchParams.get('redirect_uri');
    if (url.searchParams.get('client_id') !== state.clientId || !redirectUri) return json(response, 404, { message: 'Not Found' });
    const back = new URL(redirectUri);
    const stateParam = url.searchParams.get('state');
    if (state.denyAuthorization) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user has denied your application access.');
      back.searchParams.set('error_uri', 'https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied');
    } else {
      const challengeMethod = url.searchParams.get('code_challenge_method');
      const code = randomBytes(10).toString('hex');
      const asked = (url.searchParams.get('scope') ?? '').split(/[\s,]+/).filter(Boolean);
      codes.set(code, {
        login: state.signInAs,
        scopes: asked.filter((scope) => !state.withholdScopes.includes(scope)),
        redirectUri,
        codeChallenge: challengeMethod === 'S256' ? (url.searchParams.get('code_challenge') ?? undefined) : undefined,
        expiresAt: Date.now() + 600_000,
      });
      back.searchParams.set('code', code);
    }
    if (stateParam !== null) back.searchParams.set('state', stateParam);
    response.writeHead(302, { location: back.href }).end();
  }

  /** GitHub answers OAuth errors with 200 and an `error` field (GitHub docs: "Troubleshooting OAuth app access token request errors"). */
  async function accessToken(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(request));
    const oauthError = (error: string, description: string) =>
      json(response, 200, { error, error_description: description, error_uri: `https://docs.github.com/apps/troubleshooting#${error}` });
    const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const [basicId, basicSecret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [];
    const clientId = form.get('client_id') ?? basicId;
    const clientSecret = form.get('client_secret') ?? basicSecret;
    if (clientId !== state.clientId || clientSecret !== state.clientSecret) return oauthError('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
    if (state.tokenError) return oauthError(state.tokenError, `The stand-in was told to answer ${state.tokenError}.`);

    if (form.get('grant_type') === 'refresh_token') {
      const owner = refreshTokens.get(form.get('refresh_token') ?? '');
      refreshTokens.delete(form.get('refresh_token') ?? '');
      if (!owner) return oauthError('bad_refresh_token', 'The refresh token passed is incorrect or expired.');
      return json(response, 200, issue(owner.login, owner.scopes));
    }

    const code = form.get('code') ?? '';
    const grant = codes.get(code);
    codes.delete(code);
    if (!grant || grant.expiresAt < Date.now()) return oauthError('bad_verification_code', 'The code passed is incorrect or expired.');
    const redirectUri = form.get('redirect_uri');
    if (redirectUri !== null && redirectUri !== grant.redirectUri) return oauthError('redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.');
    if (grant.codeChallenge !== undefined) {
      const verifier = form.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== grant.codeChallenge) return oauthError('bad_verification_code', 'The code passed is incorrect or expired.');
    }
    json(response, 200, issue(grant.login, grant.scopes));
  }

  function issue(login: string, scopes: string[]): Record<string, unknown> {
    const accessToken = `${state.expiringTokens ? 'ghu' : 'gho'}_${randomBytes(18).toString('base64url')}`;
    tokens.set(accessToken, { login, scopes, expiresAt: state.expiringTokens ? Date.now() + 8 * 3_600_000 : undefined });
    // GitHub lists the granted scopes comma-separated.
    const body: Record<string, unknown> = { access_token: accessToken, token_type: 'bearer', scope: scopes.join(',') };
    if (state.expiringTokens) {
      const refreshToken = `ghr_${randomBytes(30).toString('base64url')}`;
      refreshTokens.set(refreshToken, { login, scopes, expiresAt: undefined });
      Object.assign(body, { expires_in: 28_800, refresh_token: refreshToken, refresh_token_expires_in: 15_897_600, scope: '' });
    }
    return body;
  }

  function apiCall(request: IncomingMessage, url: URL, path: string, response: ServerResponse): void {
    const token = /^(?:Bearer|token) (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    state.apiRequests.push({ path: `${path}${url.search}`, token });
    const owner = token ? tokens.get(token) : undefined;
    if (!owner || (owner.expiresAt !== undefined && owner.expiresAt < Date.now())) {
      return json(response, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    }
    const reset = Math.floor(Date.now() / 1000) + 3600;
    const headers: Record<string, string> = {
      'x-oauth-scopes': owner.scopes.join(', '),
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4999',
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-resource': 'core',
      'x-github-api-version-selected': request.headers['x-github-api-version']?.toString() ?? '2022-11-28',
    };
    if (state.apiFailure === 'rate-limited') {
      return json(response, 403, { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' }, { ...headers, 'x-ratelimit-remaining': '0' });
    }
    if (state.apiFailure === 'secondary-rate-limit') {
      return json(response, 429, { message: 'You have exceeded a secondary rate limit.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' }, { ...headers, 'retry-after': '60' });
    }
    if (state.apiFailure === 'unavailable') return json(response, 503, { message: 'Service Unavailable' });
    const user = state.users.get(owner.login);
    if (!user) return json(response, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });

    const needs = (accepted: string[]) => {
      headers['x-accepted-oauth-scopes'] = accepted.join(', ');
      const granted = new Set(owner.scopes.flatMap((scope) => (scope === 'user' ? ['user', 'read:user', 'user:email'] : scope === 'admin:org' ? [scope, 'write:org', 'read:org'] : scope === 'write:org' ? [scope, 'read:org'] : [scope])));
      return accepted.some((scope) => granted.has(scope));
    };
    switch (path) {
      case '/user':
        headers['x-accepted-oauth-scopes'] = '';
        return json(response, 200, { login: user.login, id: user.id, node_id: `U_${user.id}`, avatar_url: user.avatarUrl, type: 'User', site_admin: false, name: user.name, email: null }, headers);
      case '/user/emails':
        if (!needs(['user', 'user:email'])) return json(response, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/users/emails' }, headers);
        return page(url, response, headers, user.emails.map((entry) => ({ ...entry, visibility: entry.primary ? 'private' : null })));
      case '/user/orgs':
        if (!needs(['admin:org', 'read:org', 'user', 'write:org'])) return json(response, 403, { message: 'Resource not accessible by integration' }, headers);
        return page(url, response, headers, user.orgs.map((login, index) => ({ login, id: 5000 + index, url: `${apiBase}/orgs/${login}` })));
      case '/user/teams':
        if (!needs(['admin:org', 'read:org', 'repo', 'user', 'write:org'])) return json(response, 403, { message: 'Resource not accessible by integration' }, headers);
        return page(url, response, headers, user.teams.map((team, index) => ({ id: 7000 + index, slug: team.slug, name: team.slug, privacy: 'closed', organization: { login: team.org, id: 5000 } })));
      default:
        return json(response, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' }, headers);
    }
  }

  /** GitHub's pagination: per_page (default 30, at most 100), page, and a Link header with absolute URLs. */
  function page(url: URL, response: ServerResponse, headers: Record<string, string>, items: unknown[]): void {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page')) || 30));
    const current = Math.max(1, Number(url.searchParams.get('page')) || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const at = (n: number) => {
      const target = new URL(`${apiBase}${url.pathname.slice(apiPrefix.length)}`);
      target.searchParams.set('per_page', String(perPage));
      target.searchParams.set('page', String(n));
      return state.apiFailure === 'link-elsewhere' ? target.href.replace('127.0.0.1', 'localhost') : target.href;
    };
    const links: string[] = [];
    if (current < last) links.push(`<${at(current + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
    if (current > 1) links.push(`<${at(current - 1)}>; rel="prev"`, `<${at(1)}>; rel="first"`);
    json(response, 200, items.slice((current - 1) * perPage, current * perPage), links.length ? { ...headers, link: links.join(', ') } : headers);
  }

  return state;
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
