import { z } from 'zod';

/**
 * GitHub's REST API, the part sign-in needs: who the token's owner is (`GET /user`), their verified
 * primary email (`GET /user/emails`), their organisations (`GET /user/orgs`) and teams
 * (`GET /user/teams`). GitHub is OAuth 2.0 without OpenID Connect: there is no ID token and no
 * userinfo, so this is how a GitHub sign-in learns who signed in, and how its claims are re-checked.
 *
 * Every answer is validated; anything unexpected is an error, never a guess. Lists are read page by
 * page (the Link header) up to a bound, and a list longer than the bound is refused, never cut: a cut
 * list could leave out the very group a deny rule names.
 */

/** github.com's REST API version these answers are read as (GitHub: "About API versioning"). */
const API_VERSION = '2022-11-28';

/** How long one API request may take before GitHub counts as unreachable (as for OIDC providers). */
export const GITHUB_TIMEOUT_MS = 10_000;

/** Organisations and teams together, at most (identityProfile.ts keeps at most this many groups). */
export const MAX_GITHUB_GROUPS = 500;
/** GitHub's largest page; with it, MAX_GITHUB_GROUPS is at most this many pages per list. */
const PER_PAGE = 100;
const MAX_PAGES = Math.ceil(MAX_GITHUB_GROUPS / PER_PAGE) + 1;
/** No answer GitHub gives here comes near this: a larger one is refused before it is parsed. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Where a GitHub lives: github.com, or a GitHub Enterprise Server at its base URL. */
export interface GitHubSite {
  /** The web origin (`https://github.com` or the server's base URL): the provider's issuer-like identity. */
  webBase: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** The REST API's root, without a trailing slash. */
  apiBase: string;
}

/**
 * github.com keeps its API on a host of its own, and so does GitHub Enterprise Cloud with data residency
 * (`<sub>.ghe.com` → `api.<sub>.ghe.com`); GitHub Enterprise Server keeps it under `/api/v3` of its base
 * URL (GitHub docs: "Authorizing OAuth apps"; "Getting started with the REST API"). `apiUrl` overrides
 * where the API is, for any other layout.
 */
export function gitHubSite(baseUrl?: string, apiUrl?: string): GitHubSite {
  const webBase = (baseUrl ?? 'https://github.com').replace(/\/+$/, '');
  const web = new URL(webBase);
  const derivedApi =
    baseUrl === undefined ? 'https://api.github.com' : web.hostname.endsWith('.ghe.com') && web.pathname === '/' ? `${web.protocol}//api.${web.host}` : `${webBase}/api/v3`;
  return {
    webBase,
    authorizationEndpoint: `${webBase}/login/oauth/authorize`,
    tokenEndpoint: `${webBase}/login/oauth/access_token`,
    apiBase: (apiUrl ?? derivedApi).replace(/\/+$/, ''),
  };
}

/**
 * Why an API call failed, as the caller must act on it:
 * - `revoked`: 401, the token is no longer good (revoked by the person, the org or GitHub): a session
 *   resting on it ends;
 * - `rate-limited`: GitHub asks to wait (`retryAt`): nothing is decided, the caller tries later;
 * - `missing-scope`: the token lacks a scope the call needs (`scopes`): the provider is misconfigured;
 * - `unavailable`: unreachable, timed out or a 5xx;
 * - `invalid`: an answer that is not what GitHub documents, or a list over the bound.
 */
export type GitHubFailure = 'revoked' | 'rate-limited' | 'missing-scope' | 'unavailable' | 'invalid';

export class GitHubApiError extends Error {
  readonly failure: GitHubFailure;
  /** When GitHub says to try again (ms since the epoch), for `rate-limited`. */
  readonly retryAt: number | undefined;
  /** The scopes one of which the call needs, for `missing-scope`. */
  readonly scopes: readonly string[];

  constructor(failure: GitHubFailure, message: string, options: { retryAt?: number | undefined; scopes?: readonly string[]; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'GitHubApiError';
    this.failure = failure;
    this.retryAt = options.retryAt;
    this.scopes = options.scopes ?? [];
  }
}

/** What a GitHub sign-in learns about the token's owner: validated, not yet mapped to a profile. */
export interface GitHubAccount {
  /** The numeric user id, as a string: the subject. Never the login, which can be renamed and reused. */
  id: string;
  login: string;
  name: string | undefined;
  avatarUrl: string | undefined;
  /** The primary email, only when GitHub says it is verified; otherwise none. */
  email: string | undefined;
  /** The person has a primary email, but GitHub does not say it is verified (the address itself is not kept). */
  primaryUnverified: boolean;
  /** `org` for each organisation and `org/team` for each team (logins lowercased), or undefined when not read. */
  groups: string[] | undefined;
}

export interface ReadOptions {
  /** Read organisations and teams (the token must have read:org). */
  groups: boolean;
  fetch?: ((url: string, init: RequestInit) => Promise<Response>) | undefined;
}

const userSchema = z
  .object({
    id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    login: z.string().min(1).max(100),
    name: z.string().nullish(),
    avatar_url: z.string().nullish(),
  })
  .loose();
const emailsSchema = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }).loose());
const orgSchema = z.object({ login: z.string().min(1).max(100) }).loose();
const teamSchema = z.object({ slug: z.string().min(1).max(100), organization: orgSchema }).loose();

/**
 * Reads the account behind `accessToken`. The calls run side by side; the first failure wins (and
 * is a GitHubApiError saying what to do about it).
 */
export async function readGitHubAccount(site: GitHubSite, accessToken: string, options: ReadOptions): Promise<GitHubAccount> {
  const api = new GitHubApi(site, accessToken, options.fetch ?? fetch);
  const [user, emails, orgs, teams] = await Promise.all([
    api.get('/user').then((body) => parse(userSchema, body, '/user')),
    api.list('/user/emails', MAX_GITHUB_GROUPS).then((body) => parse(emailsSchema, body, '/user/emails')),
    options.groups ? api.list('/user/orgs', MAX_GITHUB_GROUPS).then((body) => parse(z.array(orgSchema), body, '/user/orgs')) : undefined,
    options.groups ? api.list('/user/teams', MAX_GITHUB_GROUPS).then((body) => parse(z.array(teamSchema), body, '/user/teams')) : undefined,
  ]);
  // Only the primary address, and only when verified: an unverified one was never proven to be theirs,
  // and another verified one is not the address the person chose to be known by.
  const primary = emails.find((entry) => entry.primary && entry.verified);
  return {
    id: String(user.id),
    login: user.login,
    name: user.name ?? undefined,
    avatarUrl: user.avatar_url ?? undefined,
    email: primary?.email,
    primaryUnverified: !primary && emails.some((entry) => entry.primary),
    groups: orgs && teams ? groupsOf(orgs, teams) : undefined,
  };
}

/**
 * `org` and `org/team`. Organisation logins are case-insensitive on GitHub and team slugs are
 * lowercase already: the lowercase form is the one policies name. Being on a team means being in its
 * organisation, so a team's organisation counts even when `/user/orgs` does not list it.
 */
function groupsOf(orgs: Array<z.infer<typeof orgSchema>>, teams: Array<z.infer<typeof teamSchema>>): string[] {
  const groups = new Set<string>();
  for (const org of orgs) groups.add(org.login.toLowerCase());
  for (const team of teams) {
    const org = team.organization.login.toLowerCase();
    groups.add(org);
    groups.add(`${org}/${team.slug.toLowerCase()}`);
  }
  if (groups.size > MAX_GITHUB_GROUPS) {
    throw new GitHubApiError('invalid', `the account is in more than ${MAX_GITHUB_GROUPS} organisations and teams together`);
  }
  return [...groups];
}

function parse<T>(schema: z.ZodType<T>, body: unknown, path: string): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new GitHubApiError('invalid', `GitHub's answer to ${path} is not the documented shape`, { cause: result.error });
  return result.data;
}

/** The scopes (any one of) each call needs from an OAuth app token (GitHub's REST reference). */
const NEEDED_SCOPES: Record<string, readonly string[]> = {
  '/user': [],
  '/user/emails': ['user:email', 'user'],
  '/user/orgs': ['read:org', 'write:org', 'admin:org', 'user'],
  '/user/teams': ['read:org', 'write:org', 'admin:org', 'user', 'repo'],
};

/** Scopes that include others (GitHub: "Scopes for OAuth apps"). */
const INCLUDED_SCOPES: Record<string, readonly string[]> = {
  user: ['read:user', 'user:email', 'user:follow'],
  'admin:org': ['write:org', 'read:org'],
  'write:org': ['read:org'],
};

/** A scope header's list ("read:org, user:email"), each scope with those it includes. */
export function scopeList(header: string | null): Set<string> {
  const scopes = new Set<string>();
  for (const scope of (header ?? '').split(/[\s,]+/)) {
    if (!scope) continue;
    scopes.add(scope);
    for (const included of INCLUDED_SCOPES[scope] ?? []) scopes.add(included);
  }
  return scopes;
}

class GitHubApi {
  private readonly origin: string;
  private readonly basePath: string;

  constructor(
    private readonly site: GitHubSite,
    private readonly accessToken: string,
    private readonly fetchImpl: (url: string, init: RequestInit) => Promise<Response>,
  ) {
    const base = new URL(site.apiBase);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
  }

  async get(path: string): Promise<unknown> {
    return (await this.request(new URL(`${this.site.apiBase}${path}`), path)).body;
  }

  /** Every page of a list, following `Link: <…>; rel="next"`; more than `limit` entries is an error. */
  async list(path: string, limit: number): Promise<unknown[]> {
    let url: URL | undefined = new URL(`${this.site.apiBase}${path}`);
    url.searchParams.set('per_page', String(PER_PAGE));
    const items: unknown[] = [];
    for (let page = 1; url; page++) {
      if (page > MAX_PAGES) throw new GitHubApiError('invalid', `${path} has more than ${MAX_PAGES} pages`);
      const { body, next } = await this.request(url, path);
      if (!Array.isArray(body)) throw new GitHubApiError('invalid', `GitHub's answer to ${path} is not a list`);
      items.push(...(body as unknown[]));
      if (items.length > limit) throw new GitHubApiError('invalid', `${path} lists more than ${limit} entries`);
      url = next;
    }
    return items;
  }

  private async request(url: URL, path: string): Promise<{ body: unknown; next: URL | undefined }> {
    let response: Response;
    try {
      response = await this.fetchImpl(url.href, {
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${this.accessToken}`,
          'x-github-api-version': API_VERSION,
          // GitHub refuses requests without a User-Agent.
          'user-agent': 'Gatehouse',
        },
        // Threat: a redirect carrying the token elsewhere. GitHub's /user endpoints do not redirect.
        redirect: 'manual',
        signal: AbortSignal.timeout(GITHUB_TIMEOUT_MS),
      });
    } catch (error) {
      throw new GitHubApiError('unavailable', `GitHub could not be reached (${path})`, { cause: error });
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw failureOf(response, path);
    }
    const length = Number(response.headers.get('content-length'));
    if (length > MAX_BODY_BYTES) {
      await response.body?.cancel();
      throw new GitHubApiError('invalid', `GitHub's answer to ${path} is too large`);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new GitHubApiError('unavailable', `GitHub's answer to ${path} broke off`, { cause: error });
    }
    if (text.length > MAX_BODY_BYTES) throw new GitHubApiError('invalid', `GitHub's answer to ${path} is too large`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw new GitHubApiError('invalid', `GitHub's answer to ${path} is not JSON`, { cause: error });
    }
    return { body, next: this.nextPage(response.headers.get('link'), path) };
  }

  /**
   * The `rel="next"` page of a Link header (RFC 8288), only on this API's own origin and under its root.
   * Threat: a Link header that sends the next request, and the token with it, to another host.
   */
  private nextPage(link: string | null, path: string): URL | undefined {
    if (!link) return undefined;
    // Each link is `<target>` then `; name=value` parameters; rel may hold several space-separated types.
    for (const [, target, params] of link.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]*)*)/g)) {
      const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]*))/i.exec(params!);
      if (!(rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).includes('next')) continue;
      let next: URL;
      try {
        next = new URL(target!, `${this.site.apiBase}/`);
      } catch (error) {
        throw new GitHubApiError('invalid', `the next page of ${path} is not a URL`, { cause: error });
      }
      if (next.origin !== this.origin || !next.pathname.startsWith(`${this.basePath}/`) || next.username || next.password) {
        throw new GitHubApiError('invalid', `the next page of ${path} is not on GitHub's API`);
      }
      return next;
    }
    return undefined;
  }
}

/** What a refusal means (GitHub docs: "Troubleshooting the REST API", "Rate limits for the REST API"). */
function failureOf(response: Response, path: string): GitHubApiError {
  const { status, headers } = response;
  if (status === 401) return new GitHubApiError('revoked', `GitHub refused the token (401 at ${path})`);
  if (status === 403 || status === 429) {
    const retryAfter = Number(headers.get('retry-after'));
    const reset = Number(headers.get('x-ratelimit-reset'));
    // Secondary limits say retry-after; the primary limit says x-ratelimit-remaining: 0 until its reset.
    if (headers.get('retry-after') !== null && Number.isFinite(retryAfter)) {
      return new GitHubApiError('rate-limited', `GitHub's rate limit (${status} at ${path})`, { retryAt: Date.now() + Math.max(0, retryAfter) * 1000 });
    }
    if (headers.get('x-ratelimit-remaining') === '0') {
      return new GitHubApiError('rate-limited', `GitHub's rate limit (${status} at ${path})`, { retryAt: Number.isFinite(reset) && reset > 0 ? reset * 1000 : undefined });
    }
    if (status === 429) return new GitHubApiError('rate-limited', `GitHub's rate limit (429 at ${path})`);
  }
  if (status === 403 || status === 404) {
    // GitHub answers a call the token's scopes do not allow with 403 (or 404 where it hides what
    // exists), naming the scopes it has (X-OAuth-Scopes) and those the call accepts.
    const granted = headers.get('x-oauth-scopes');
    const accepted = (headers.get('x-accepted-oauth-scopes') ?? '').split(/[\s,]+/).filter(Boolean);
    const needed = accepted.length > 0 ? accepted : (NEEDED_SCOPES[path] ?? []);
    if (granted !== null && needed.length > 0) {
      const have = scopeList(granted);
      if (!needed.some((scope) => have.has(scope))) {
        // Named: the narrowest scope that would do (ours first), not whichever GitHub lists first.
        const named = NEEDED_SCOPES[path]?.find((scope) => needed.includes(scope)) ?? needed[0];
        return new GitHubApiError('missing-scope', `the token lacks the ${named} scope that ${path} needs`, { scopes: needed });
      }
    }
    return new GitHubApiError('invalid', `GitHub refused ${path} (${status})`);
  }
  if (status >= 500) return new GitHubApiError('unavailable', `GitHub failed (${status} at ${path})`);
  return new GitHubApiError('invalid', `GitHub answered ${path} with ${status}`);
}
