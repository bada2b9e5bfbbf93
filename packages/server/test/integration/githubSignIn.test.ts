import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser, type Hop } from './support/browser.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startGitHubStandIn, type GitHubStandIn } from './support/githubStandIn.js';

/**
 * GitHub sign-in through the real server and its callback, against a loopback stand-in that answers as
 * GitHub's documented API does (support/githubStandIn.ts): OAuth 2.0 with PKCE, the profile from the
 * REST API, organisations and teams as groups reaching a policy decision at forward-auth, and the
 * claims re-read with the kept access token once the refresh interval has passed.
 */

const INTERVAL_MS = 2_000;
const pastTheInterval = () => new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 300));

function providerFor(github: GitHubStandIn, id: string, extra: Record<string, unknown> = {}) {
  return {
    kind: 'github' as const,
    id,
    name: 'GitHub',
    clientId: github.clientId,
    clientSecret: github.clientSecret,
    baseUrl: github.webBase,
    // github.com keeps its API on an origin of its own; GitHub Enterprise Server's is found from baseUrl.
    ...(github.layout === 'github.com' ? { apiUrl: github.apiBase } : {}),
    createUsers: true,
    ...extra,
  };
}

/** The browser's whole sign-in: Gatehouse → GitHub's authorize page → the callback, and what it answered. */
async function signIn(gatehouse: RunningGatehouse, providerId: string, as: string, github: GitHubStandIn): Promise<{ browser: ScriptedBrowser; hop: Hop; secret: string | undefined }> {
  github.signInAs = as;
  const browser = new ScriptedBrowser();
  const start = await browser.request(`${gatehouse.url}/.gatehouse/sign-in/${providerId}`, { headers: { accept: 'text/html' } });
  expect(start.status).toBe(303);
  // Stop at the first page after the callback (the portal's start page is the web app's).
  const { hop } = await browser.follow(start, (url) => url.port === String(gatehouse.port) && !url.pathname.startsWith('/.gatehouse/'));
  return { browser, hop, secret: browser.cookie('localhost', 'gatehouse_session') };
}

describe.each(['github.com', 'ghes'] as const)('sign-in with GitHub (%s layout)', (layout) => {
  let github: GitHubStandIn;
  let gatehouse: RunningGatehouse;

  beforeAll(async () => {
    github = await startGitHubStandIn(layout);
    gatehouse = await startGatehouse({ providers: [providerFor(github, 'github')] });
  });
  afterAll(async () => {
    await gatehouse?.close();
    await github?.close();
  });

  it('signs in with the numeric id as subject, the verified primary email, and orgs and teams as groups', async () => {
    const { hop, secret } = await signIn(gatehouse, 'github', 'octocat', github);
    expect(hop.status).toBe(303);
    expect(secret).toBeDefined();
    const octocat = github.users.get('octocat')!;
    const identity = await gatehouse.services.database.db.selectFrom('identities').selectAll().where('provider_id', '=', 'github').executeTakeFirstOrThrow();
    expect(identity.subject).toBe(String(octocat.id));
    expect(identity.email).toBe('octocat@example.com');
    expect(identity.email_verified).toBe(1);
    expect(JSON.parse(identity.claims)).toMatchObject({ groups: ['acme', 'acme/platform'] });
    // PKCE S256 was used, and the API was called with the token GitHub issued (on the right layout).
    expect(github.apiRequests.map((request) => request.path.split('?')[0])).toEqual(expect.arrayContaining(['/user', '/user/emails', '/user/orgs', '/user/teams']));
  });
});

describe('GitHub: rules, policies and claims re-checks', () => {
  let github: GitHubStandIn;
  let gatehouse: RunningGatehouse;
  let platform = '';

  beforeAll(async () => {
    github = await startGitHubStandIn('github.com');
    github.addUser({ login: 'outsider', name: 'Out Sider', orgs: ['globex'] });
    github.addUser({ login: 'sales', orgs: ['acme'], teams: [{ org: 'acme', slug: 'sales' }] });
    github.addUser({ login: 'acmeonly', orgs: ['acme'] });
    github.addUser({ login: 'unverified', emails: [{ email: 'unverified@example.com', primary: true, verified: false }, { email: 'other@example.com', primary: false, verified: true }] });
    const port = await freePort();
    platform = `http://platform.localhost:${port}`;
    gatehouse = await startGatehouse({
      port,
      // The check's X-Forwarded-* come from the proxy, here the test on loopback.
      trustedProxies: ['127.0.0.1/8'],
      session: { claimsRefreshInterval: `${INTERVAL_MS / 1000}s` },
      providers: [providerFor(github, 'github'), providerFor(github, 'github-acme', { name: 'GitHub (Acme)', allowedOrganizations: ['ACME'] })],
      // GitHub's groups count prefixed (github:), however the provider is set up.
      apps: [{ id: 'platform', name: 'Platform', publicUrl: platform, upstream: 'http://127.0.0.1:9', policy: { allow: [{ groups: ['github:acme/platform'] }] } }],
    });
  });
  afterAll(async () => {
    await gatehouse?.close();
    await github?.close();
  });

  /** A forward-auth check of the platform app, with an app token for the browser's session. */
  async function platformCheck(secret: string): Promise<number> {
    const session = await gatehouse.services.sessions.findActive(secret);
    if (!session) return 401;
    const token = await gatehouse.services.appSessions.create(session.id, 'platform', platform);
    return (await fetchCheck(token)).status;
  }
  function fetchCheck(token: string) {
    return fetch(`${gatehouse.url}/.gatehouse/auth/platform`, {
      headers: { cookie: `gatehouse_app=${token}`, 'x-forwarded-proto': 'http', 'x-forwarded-host': new URL(platform).host, 'x-forwarded-uri': '/', 'x-forwarded-method': 'GET' },
      redirect: 'manual',
    });
  }

  // Threat: a GitHub organisation named like one of the organisation's own groups. Its groups count only
  // prefixed, so a free organisation called "acme/platform"'s look-alike never meets a bare rule.
  it('groups count only as github:<org>, and a bare rule never matches them', async () => {
    const member = await signIn(gatehouse, 'github', 'octocat', github);
    const current = await gatehouse.services.sessions.findActive(member.secret!);
    const check = await fetchCheck(await gatehouse.services.appSessions.create(current!.id, 'platform', platform));
    expect(check.status).toBe(200);
    expect(check.headers.get('x-gatehouse-groups')).toBe('github:acme,github:acme/platform');
  });

  // Threat: GitHub organisations are anyone's to register: with allowedOrganizations, only those
  // organisations (and their teams) become groups.
  it('with allowedOrganizations, only the allowed organisations become groups', async () => {
    github.addUser({ login: 'twohats', orgs: ['acme', 'platform-admins'], teams: [{ org: 'platform-admins', slug: 'root' }] });
    const { secret } = await signIn(gatehouse, 'github-acme', 'twohats', github);
    const session = await gatehouse.services.sessions.findActive(secret!);
    const identity = await gatehouse.services.database.db.selectFrom('identities').select('claims').where('id', '=', session!.identity_id).executeTakeFirstOrThrow();
    expect(JSON.parse(identity.claims)).toMatchObject({ groups: ['acme'], facts: { organizations: ['acme'] } });
  });

  it('a policy on a team admits its member and refuses someone else, at forward-auth', async () => {
    const member = await signIn(gatehouse, 'github', 'octocat', github);
    const other = await signIn(gatehouse, 'github', 'sales', github);
    expect(await platformCheck(member.secret!)).toBe(200);
    expect(await platformCheck(other.secret!)).toBe(403);
  });

  // Threat: an address nobody proved is the person's (GitHub lets anyone add any address to an account).
  it('an unverified primary email is refused, with the reason on the error page', async () => {
    const { hop, secret } = await signIn(gatehouse, 'github', 'unverified', github);
    expect(hop.status).toBe(403);
    expect(hop.headers.get('content-type')).toMatch(/^text\/html/);
    expect(hop.body).toContain('Your account at GitHub has no verified email. Verify it at GitHub, then sign in again.');
    expect(hop.body).not.toContain('other@example.com');
    expect(secret).toBeUndefined();
  });

  // Threat: anyone with a GitHub account signing in to a deployment meant for one organisation.
  it('allowedOrganizations admits members of the organisation only', async () => {
    // The setting's "ACME" is compared as GitHub compares logins: without case.
    expect((await signIn(gatehouse, 'github-acme', 'acmeonly', github)).hop.status).toBe(303);
    const outsider = await signIn(gatehouse, 'github-acme', 'outsider', github);
    expect(outsider.hop.status).toBe(403);
    expect(outsider.hop.body).toContain('Your account at GitHub (Acme) is not a member of an organisation allowed here.');
    expect(outsider.secret).toBeUndefined();
  });

  // Threat: stale claims — a team membership GitHub no longer has still opening an app.
  it('a team removed at GitHub stops counting once the interval has passed (re-read with the kept token)', async () => {
    github.addUser({ login: 'mover', orgs: ['acme'], teams: [{ org: 'acme', slug: 'platform' }] });
    const { secret } = await signIn(gatehouse, 'github', 'mover', github);
    expect(await platformCheck(secret!)).toBe(200);
    github.users.get('mover')!.teams = [];
    await pastTheInterval();
    expect(await platformCheck(secret!)).toBe(403);
    // The session lives on, with GitHub's current groups.
    const session = await gatehouse.services.sessions.findActive(secret!);
    expect(session).toBeDefined();
    const identity = await gatehouse.services.database.db.selectFrom('identities').select('claims').where('id', '=', session!.identity_id).executeTakeFirstOrThrow();
    expect(JSON.parse(identity.claims)).toMatchObject({ groups: ['acme'] });
  });

  it('someone who left the allowed organisation is signed out at the next re-check', async () => {
    github.addUser({ login: 'leaver', orgs: ['acme'] });
    const { secret } = await signIn(gatehouse, 'github-acme', 'leaver', github);
    expect(secret).toBeDefined();
    github.users.get('leaver')!.orgs = ['globex'];
    await pastTheInterval();
    expect(await platformCheck(secret!)).toBe(401);
    expect(await gatehouse.services.sessions.findActive(secret!)).toBeUndefined();
  });

  // Threat: a session outliving the person's revocation of the app at GitHub.
  it('a revoked token ends the session at the next re-check, recorded in the audit log', async () => {
    github.addUser({ login: 'revoker', orgs: ['acme'], teams: [{ org: 'acme', slug: 'platform' }] });
    const { secret } = await signIn(gatehouse, 'github', 'revoker', github);
    const session = await gatehouse.services.sessions.findActive(secret!);
    expect(await platformCheck(secret!)).toBe(200);
    github.revokeTokens('revoker');
    await pastTheInterval();
    expect(await platformCheck(secret!)).toBe(401);
    const row = await gatehouse.services.database.db.selectFrom('sessions').select(['revoked_at', 'revoked_reason']).where('id', '=', session!.id).executeTakeFirstOrThrow();
    expect(row.revoked_at).not.toBeNull();
    expect(row.revoked_reason).toBe('refresh-failed');
    const events = await gatehouse.services.database.db.selectFrom('audit_events').selectAll().where('type', '=', 'session_revoked').where('session_id', '=', session!.id).execute();
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.details)).toMatchObject({ by: 'system', reason: 'refresh-failed', detail: 'sign_in_denied' });
  });

  it('GitHub App user tokens: the refresh token is redeemed at each re-check, and a refused one ends the session', async () => {
    github.expiringTokens = true;
    try {
      github.addUser({ login: 'app-user', orgs: ['acme'], teams: [{ org: 'acme', slug: 'platform' }] });
      const { secret } = await signIn(gatehouse, 'github', 'app-user', github);
      const session = await gatehouse.services.sessions.findActive(secret!);
      const firstRefreshToken = gatehouse.services.sessions.refreshToken(session!);
      expect(firstRefreshToken).toMatch(/^ghr_/);
      github.users.get('app-user')!.teams = [];
      await pastTheInterval();
      expect(await platformCheck(secret!)).toBe(403);
      // Redeemed once (the stand-in, like GitHub, accepts a refresh token once) and the new one kept.
      const refreshed = await gatehouse.services.sessions.findActive(secret!);
      expect(gatehouse.services.sessions.refreshToken(refreshed!)).not.toBe(firstRefreshToken);
      github.revokeTokens('app-user');
      await pastTheInterval();
      expect(await platformCheck(secret!)).toBe(401);
    } finally {
      github.expiringTokens = false;
    }
  });

  // Threat: a person keeping old groups by spending GitHub's rate limit on purpose (their own tokens share
  // it): unconfirmed claims end the session after session.maxClaimsAge (here twice the interval).
  it('a rate limit that lasts past session.maxClaimsAge ends the session', async () => {
    github.addUser({ login: 'spender', orgs: ['acme'], teams: [{ org: 'acme', slug: 'platform' }] });
    const { secret } = await signIn(gatehouse, 'github', 'spender', github);
    const session = await gatehouse.services.sessions.findActive(secret!);
    github.apiFailure = 'rate-limited';
    try {
      await pastTheInterval();
      // Postponed once: still in.
      expect(await platformCheck(secret!)).toBe(200);
      await pastTheInterval();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await platformCheck(secret!)).toBe(401);
      const row = await gatehouse.services.database.db.selectFrom('sessions').select(['revoked_reason']).where('id', '=', session!.id).executeTakeFirstOrThrow();
      expect(row.revoked_reason).toBe('claims-unconfirmed');
    } finally {
      github.apiFailure = undefined;
    }
  });

  it.each(['rate-limited', 'secondary-rate-limit'] as const)('%s at GitHub keeps the session until the next try', async (failure) => {
    const { secret } = await signIn(gatehouse, 'github', 'octocat', github);
    github.apiFailure = failure;
    try {
      await pastTheInterval();
      expect(await platformCheck(secret!)).toBe(200);
      expect(await gatehouse.services.sessions.findActive(secret!)).toBeDefined();
    } finally {
      github.apiFailure = undefined;
    }
  });

  it('a rate limit at sign-in is "unavailable", with when to try again', async () => {
    github.apiFailure = 'rate-limited';
    try {
      const { hop, secret } = await signIn(gatehouse, 'github', 'octocat', github);
      expect(hop.status).toBe(502);
      expect(hop.body).toMatch(/We couldn(?:'|&#39;|&#x27;)t reach GitHub\. Try again in a minute\./);
      expect(Number(hop.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(secret).toBeUndefined();
    } finally {
      github.apiFailure = undefined;
    }
  });

  it('a token without read:org gives an error naming the missing scope', async () => {
    github.withholdScopes = ['read:org'];
    try {
      const { hop, secret } = await signIn(gatehouse, 'github', 'octocat', github);
      expect(hop.status).toBe(403);
      expect(hop.body).toContain('the token lacks the read:org scope');
      expect(secret).toBeUndefined();
    } finally {
      github.withholdScopes = [];
    }
  });

  it('a token endpoint error sent as HTTP 200 (GitHub) is a clear refusal, not a crash', async () => {
    github.tokenError = 'invalid_grant';
    try {
      const { hop, secret } = await signIn(gatehouse, 'github', 'octocat', github);
      expect(hop.status).toBe(403);
      expect(hop.body).toContain('GitHub did not sign you in: The stand-in was told to answer invalid_grant.');
      expect(secret).toBeUndefined();
    } finally {
      github.tokenError = undefined;
    }
    // GitHub's word for a wrong client secret: the operator's to fix, so the person is told to tell them.
    github.tokenError = 'incorrect_client_credentials';
    try {
      const { hop, secret } = await signIn(gatehouse, 'github', 'octocat', github);
      expect(hop.status).toBe(502);
      expect(hop.body).toContain('provider_misconfigured');
      expect(hop.body).toContain('GitHub is not set up correctly for this site');
      expect(secret).toBeUndefined();
    } finally {
      github.tokenError = undefined;
    }
    github.tokenError = 'bad_verification_code';
    try {
      const { hop } = await signIn(gatehouse, 'github', 'octocat', github);
      expect(hop.status).toBe(400);
      expect(hop.body).toContain('This sign-in took too long or was already used.');
    } finally {
      github.tokenError = undefined;
    }
  });

  it('the person refusing the app at GitHub is a clear refusal', async () => {
    github.denyAuthorization = true;
    try {
      const { hop } = await signIn(gatehouse, 'github', 'octocat', github);
      expect(hop.status).toBe(403);
      expect(hop.body).toContain('GitHub did not sign you in: The user has denied your application access.');
    } finally {
      github.denyAuthorization = false;
    }
  });

  // Threat: the GitHub token leaking through storage or the API (it reads the person's private orgs).
  it('keeps the access token encrypted, and never shows it', async () => {
    const before = github.apiRequests.length;
    const { browser, secret } = await signIn(gatehouse, 'github', 'octocat', github);
    const token = github.apiRequests.slice(before).find((request) => request.path === '/user')!.token!;
    const session = await gatehouse.services.sessions.findActive(secret!);
    const row = await gatehouse.services.database.db.selectFrom('sessions').selectAll().where('id', '=', session!.id).executeTakeFirstOrThrow();
    expect(row.access_token_enc).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(token);
    expect(gatehouse.services.sessions.accessToken(row)).toBe(token);
    const me = await browser.request(`${gatehouse.url}/api/session`);
    expect(me.status).toBe(200);
    expect(me.body).not.toContain(token);
  });
});
