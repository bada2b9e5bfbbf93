import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubApiError, gitHubSite, readGitHubAccount, scopeList, type GitHubSite } from '../src/providers/kinds/githubApi.js';
import { startGitHubStandIn, type GitHubStandIn } from './integration/support/githubStandIn.js';

/** GitHub Enterprise Server's API is found from its base URL; github.com's lives elsewhere (here: the stand-in's API port). */
function siteOf(standIn: GitHubStandIn): GitHubSite {
  return standIn.layout === 'ghes' ? gitHubSite(standIn.webBase) : gitHubSite(standIn.webBase, standIn.apiBase);
}

async function failureOf(promise: Promise<unknown>): Promise<GitHubApiError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GitHubApiError);
  return error as GitHubApiError;
}

describe('where GitHub lives', () => {
  it('github.com keeps its API on api.github.com', () => {
    expect(gitHubSite()).toEqual({
      webBase: 'https://github.com',
      authorizationEndpoint: 'https://github.com/login/oauth/authorize',
      tokenEndpoint: 'https://github.com/login/oauth/access_token',
      apiBase: 'https://api.github.com',
    });
  });

  it('GitHub Enterprise Server keeps it under /api/v3 of its base URL', () => {
    expect(gitHubSite('https://github.example.com/')).toEqual({
      webBase: 'https://github.example.com',
      authorizationEndpoint: 'https://github.example.com/login/oauth/authorize',
      tokenEndpoint: 'https://github.example.com/login/oauth/access_token',
      apiBase: 'https://github.example.com/api/v3',
    });
  });

  it('GitHub Enterprise Cloud with data residency keeps it on api.<subdomain>.ghe.com', () => {
    expect(gitHubSite('https://octocorp.ghe.com').apiBase).toBe('https://api.octocorp.ghe.com');
  });

  it('an apiUrl says where the API is when it is elsewhere', () => {
    expect(gitHubSite('http://127.0.0.1:8080', 'http://127.0.0.1:8081/').apiBase).toBe('http://127.0.0.1:8081');
  });

  it('reads scope headers with the scopes each one includes', () => {
    expect([...scopeList('user, admin:org')].sort()).toEqual(['admin:org', 'read:org', 'read:user', 'user', 'user:email', 'user:follow', 'write:org']);
    expect([...scopeList(null)]).toEqual([]);
  });
});

describe.each(['github.com', 'ghes'] as const)('the REST client against the %s layout', (layout) => {
  let github: GitHubStandIn;
  let site: GitHubSite;

  beforeAll(async () => {
    github = await startGitHubStandIn(layout);
    site = siteOf(github);
  });
  afterAll(() => github.close());

  it('reads the user, the verified primary email, organisations and teams', async () => {
    const account = await readGitHubAccount(site, github.tokenFor('octocat'), { groups: true });
    const octocat = github.users.get('octocat')!;
    expect(account).toEqual({
      id: String(octocat.id),
      login: 'octocat',
      name: 'The Octocat',
      avatarUrl: octocat.avatarUrl,
      email: 'octocat@example.com',
      primaryUnverified: false,
      groups: ['acme', 'acme/platform'],
    });
    const last = github.apiRequests.at(-1)!;
    expect(last.path.startsWith('/user')).toBe(true);
  });

  it('reads no organisations or teams when not asked to', async () => {
    const before = github.apiRequests.length;
    const account = await readGitHubAccount(site, github.tokenFor('octocat', ['read:user', 'user:email']), { groups: false });
    expect(account.groups).toBeUndefined();
    expect(github.apiRequests.slice(before).map((request) => request.path.split('?')[0]).sort()).toEqual(['/user', '/user/emails']);
  });

  // Threat: an address nobody proved is the person's own (GitHub lets anyone add any address).
  it('never takes an unverified email, nor a verified one that is not the primary', async () => {
    github.addUser({
      login: 'unverified-primary',
      emails: [
        { email: 'claimed@example.com', primary: true, verified: false },
        { email: 'other@example.com', primary: false, verified: true },
      ],
    });
    const account = await readGitHubAccount(site, github.tokenFor('unverified-primary'), { groups: true });
    expect(account.email).toBeUndefined();
    // Said, so the refusal names the real reason (not verified), without the address itself.
    expect(account.primaryUnverified).toBe(true);
    expect(JSON.stringify(account)).not.toContain('claimed@example.com');
  });

  it('follows every page of a long list, lowercasing organisation logins', async () => {
    const teams = Array.from({ length: 230 }, (_, index) => ({ org: index % 2 ? 'Acme' : 'Globex', slug: `team-${index}` }));
    github.addUser({ login: 'busy', orgs: ['Acme', 'Globex', 'Initech'], teams });
    const account = await readGitHubAccount(site, github.tokenFor('busy'), { groups: true });
    expect(account.groups).toHaveLength(3 + 230);
    expect(account.groups).toContain('initech');
    expect(account.groups).toContain('acme/team-229');
    expect(account.groups).toContain('globex/team-0');
    expect(github.apiRequests.filter((request) => request.path.startsWith('/user/teams')).map((request) => request.path).slice(-3)).toEqual([
      '/user/teams?per_page=100',
      '/user/teams?per_page=100&page=2',
      '/user/teams?per_page=100&page=3',
    ]);
  });

  // Threat: a list cut at a bound could leave out the very group a deny rule names.
  it('refuses a list longer than the bound instead of cutting it', async () => {
    github.addUser({ login: 'everywhere', teams: Array.from({ length: 520 }, (_, index) => ({ org: 'acme', slug: `t${index}` })) });
    const error = await failureOf(readGitHubAccount(site, github.tokenFor('everywhere'), { groups: true }));
    expect(error.failure).toBe('invalid');
    expect(error.message).toMatch(/more than 500/);
  });

  // Threat: a Link header that sends the next request, with the token, to another host.
  it('refuses a next page on another host', async () => {
    github.addUser({ login: 'linked', teams: Array.from({ length: 150 }, (_, index) => ({ org: 'acme', slug: `t${index}` })) });
    github.apiFailure = 'link-elsewhere';
    try {
      const before = github.apiRequests.length;
      const error = await failureOf(readGitHubAccount(site, github.tokenFor('linked'), { groups: true }));
      expect(error.failure).toBe('invalid');
      expect(error.message).toMatch(/not on GitHub's API/);
      expect(github.apiRequests.slice(before).some((request) => request.path.includes('page=2'))).toBe(false);
    } finally {
      github.apiFailure = undefined;
    }
  });

  it('a revoked token is `revoked`', async () => {
    github.addUser({ login: 'leaver' });
    const token = github.tokenFor('leaver');
    github.revokeTokens('leaver');
    expect((await failureOf(readGitHubAccount(site, token, { groups: true }))).failure).toBe('revoked');
  });

  it.each([
    ['rate-limited', 'the primary rate limit (403, x-ratelimit-remaining: 0)'],
    ['secondary-rate-limit', 'a secondary rate limit (429, retry-after)'],
  ] as const)('%s: %s is `rate-limited`, with when to try again', async (failure, _what) => {
    github.apiFailure = failure;
    try {
      const error = await failureOf(readGitHubAccount(site, github.tokenFor('octocat'), { groups: true }));
      expect(error.failure).toBe('rate-limited');
      expect(error.retryAt).toBeGreaterThan(Date.now());
    } finally {
      github.apiFailure = undefined;
    }
  });

  it('a 5xx is `unavailable`, and so is a server that does not answer', async () => {
    github.apiFailure = 'unavailable';
    try {
      expect((await failureOf(readGitHubAccount(site, github.tokenFor('octocat'), { groups: true }))).failure).toBe('unavailable');
    } finally {
      github.apiFailure = undefined;
    }
    const closed = { ...site, apiBase: 'http://127.0.0.1:9' };
    expect((await failureOf(readGitHubAccount(closed, 'token', { groups: true }))).failure).toBe('unavailable');
  });

  it.each([
    [['read:user', 'user:email'], 'read:org'],
    [['read:user', 'read:org'], 'user:email'],
  ])('a token with only %j lacks a scope: `missing-scope`, naming %s', async (scopes, named) => {
    const error = await failureOf(readGitHubAccount(site, github.tokenFor('octocat', scopes), { groups: true }));
    expect(error.failure).toBe('missing-scope');
    expect(error.scopes).toContain(named);
    expect(error.message).toContain(`lacks the ${named} scope`);
  });

  it('broader scopes that include the needed ones are enough (user, admin:org)', async () => {
    const account = await readGitHubAccount(site, github.tokenFor('octocat', ['user', 'admin:org']), { groups: true });
    expect(account.groups).toEqual(['acme', 'acme/platform']);
  });
});

describe('answers that are not what GitHub documents', () => {
  function site(): GitHubSite {
    return gitHubSite('https://github.example.com');
  }
  function answering(status: number, body: string, headers: Record<string, string> = {}): typeof fetch {
    return (async () => new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } })) as typeof fetch;
  }

  it.each([
    ['not JSON', '<html>'],
    ['a user without an id', '{"login":"x"}'],
    ['an id that is not a number', '{"id":"1","login":"x"}'],
  ])('%s is `invalid`', async (_, body) => {
    const error = await failureOf(readGitHubAccount(site(), 't', { groups: false, fetch: answering(200, body) }));
    expect(error.failure).toBe('invalid');
  });

  // Threat: a redirect that would carry the token to wherever it points.
  it('a redirect is not followed', async () => {
    const error = await failureOf(readGitHubAccount(site(), 't', { groups: false, fetch: answering(302, '', { location: 'https://elsewhere.example' }) }));
    expect(error.failure).toBe('invalid');
  });

  it('a 403 without rate-limit or scope headers is `invalid`, not a rate limit', async () => {
    const error = await failureOf(readGitHubAccount(site(), 't', { groups: false, fetch: answering(403, '{"message":"Forbidden"}') }));
    expect(error.failure).toBe('invalid');
  });

  it('a 429 without headers is still a rate limit', async () => {
    const error = await failureOf(readGitHubAccount(site(), 't', { groups: false, fetch: answering(429, '{}') }));
    expect(error.failure).toBe('rate-limited');
  });
});
