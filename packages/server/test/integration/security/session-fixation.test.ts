import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from '../support/browser.js';
import { registeredRoutes } from '../support/routes.js';
import { open, raw, signIn, startSecurityRig, type SecurityRig } from '../support/securityRig.js';

// Threat class: session fixation and credential confusion — a session id an attacker planted before
// sign-in being adopted by the victim's sign-in (so the attacker shares the victim's session), a token
// minted for one app origin opening another app, and a revoked credential replayed somewhere that
// still honours it.

let rig: SecurityRig;
beforeAll(async () => {
  rig = await startSecurityRig();
});
afterAll(() => rig?.close());

const portalHost = 'localhost';
const SESSION = 'gatehouse_session';
const APP = 'gatehouse_app';

async function sessionOf(cookie: string): Promise<{ status: number; email?: string; sessionId?: string }> {
  const browser = new ScriptedBrowser();
  browser.setCookie(portalHost, SESSION, cookie);
  const answer = await browser.request(`${rig.portal}/api/session`);
  if (answer.status !== 200) return { status: answer.status };
  const me = JSON.parse(answer.body) as { user: { email: string }; session: { id: string } };
  return { status: 200, email: me.user.email, sessionId: me.session.id };
}

describe('a session id planted before sign-in', () => {
  it('an unknown, well-formed one is replaced by sign-in, and never becomes a session', async () => {
    const planted = randomBytes(32).toString('base64url');
    const browser = new ScriptedBrowser(rig.loopbackHosts);
    browser.setCookie(portalHost, SESSION, planted);
    await signIn(rig, 'dev', 'alice@example.com', 'alice', browser);
    const issued = browser.cookie(portalHost, SESSION)!;
    expect(issued).not.toBe(planted);
    expect((await sessionOf(planted)).status).toBe(401);
    expect((await sessionOf(issued)).email).toBe('alice@example.com');
  });

  it("the attacker's own valid session planted in the victim's browser: the victim's sign-in rotates it, and the attacker's session stays the attacker's", async () => {
    const attacker = await signIn(rig, 'dev', 'bob@example.com', 'bob');
    const attackerCookie = attacker.browser.cookie(portalHost, SESSION)!;
    const victimBrowser = new ScriptedBrowser(rig.loopbackHosts);
    victimBrowser.setCookie(portalHost, SESSION, attackerCookie);
    await signIn(rig, 'dev', 'alice@example.com', 'alice', victimBrowser);
    const victimCookie = victimBrowser.cookie(portalHost, SESSION)!;
    expect(victimCookie).not.toBe(attackerCookie);
    const attackerNow = await sessionOf(attackerCookie);
    // Whatever became of the attacker's session, it never carries the victim's identity.
    expect(attackerNow.email).not.toBe('alice@example.com');
    const victim = await sessionOf(victimCookie);
    expect(victim.email).toBe('alice@example.com');
    expect(victim.sessionId).not.toBe(attacker.sessionId);
  });
});

describe('credentials are good for one place only', () => {
  it("an app host's token does not open another app, nor the portal; the portal cookie does not open an app", async () => {
    const alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
    expect((await open(alice.browser, `${rig.apps.any}/whoami`)).status).toBe(200);
    const anyToken = alice.browser.cookie('any.localhost', APP)!;
    const portalCookie = alice.browser.cookie(portalHost, SESSION)!;
    expect(anyToken).toBeDefined();
    const before = rig.upstream.last;
    for (const [host, cookie] of [
      ['staff.localhost', `${APP}=${anyToken}`],
      ['staff.localhost', `${APP}=${portalCookie}`],
      ['staff.localhost', `${SESSION}=${portalCookie}`],
      ['any.localhost', `${APP}=${portalCookie}`],
    ] as const) {
      const json = await raw(rig, '/private', { host: `${host}:${rig.gatehouse.port}`, accept: 'application/json', cookie });
      expect(json.status, `${host} ${cookie.slice(0, 24)}`).toBe(401);
    }
    expect(rig.upstream.last).toBe(before);
    expect((await sessionOf(anyToken)).status).toBe(401);
  });
});

describe('a revoked session replayed on every route', () => {
  it('is refused everywhere: no route answers with the session, changes anything, or fails with a 5xx', async () => {
    const alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
    expect((await open(alice.browser, `${rig.apps.any}/`)).status).toBe(200);
    expect((await open(alice.browser, `${rig.apps.staff}/`)).status).toBe(200);
    const portalCookie = alice.browser.cookie(portalHost, SESSION)!;
    const appTokens = { any: alice.browser.cookie('any.localhost', APP)!, staff: alice.browser.cookie('staff.localhost', APP)! };
    // Sign out (the session is revoked), keeping a copy of every credential.
    const out = await alice.browser.request(`${rig.portal}/.gatehouse/sign-out`, { method: 'POST', form: { csrf_token: alice.csrf }, headers: { origin: rig.portal } });
    expect(out.status).toBeLessThan(400);
    expect((await sessionOf(portalCookie)).status).toBe(401);

    const params: Record<string, string> = { userId: alice.userId, sessionId: alice.sessionId, identityId: 'x', providerId: 'dev', appId: 'any', testId: 'x' };
    const routes = registeredRoutes(rig.gatehouse.app).filter((route) => !route.path.startsWith('/assets/'));
    expect(routes.length).toBeGreaterThan(30);
    const stateBefore = await snapshot();
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? 'x').replace(/\*$/, '/x');
      for (const method of route.methods.filter((m) => m !== 'HEAD')) {
        const replay = new ScriptedBrowser();
        replay.setCookie(portalHost, SESSION, portalCookie);
        const body = method === 'GET' ? undefined : '{}';
        const answer = await replay.request(`${rig.portal}${path}`, {
          method,
          headers: { origin: rig.portal, 'x-csrf-token': alice.csrf, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body } : {}),
        });
        const what = `${method} ${path} → ${answer.status}`;
        expect(answer.status, what).toBeLessThan(500);
        expect(answer.body, what).not.toContain('alice@example.com');
        expect(answer.body, what).not.toContain(alice.sessionId);
        if (path.startsWith('/api/me') || path.startsWith('/api/admin') || path === '/api/session') expect(answer.status, what).toBe(401);
        // No route turns the dead cookie into a new session.
        expect(answer.headers.getSetCookie().filter((line) => line.startsWith(`${SESSION}=`) && !/max-age=0|expires=Thu, 01 Jan 1970/i.test(line)), what).toEqual([]);
      }
    }
    expect(await snapshot()).toEqual(stateBefore);

    // The app hosts' tokens died with the session: on the hot path and on Gatehouse's pages there.
    const before = rig.upstream.last;
    for (const [app, token] of Object.entries(appTokens)) {
      for (const path of ['/', '/whoami', '/.gatehouse/jwks.json', '/x?y=1']) {
        const answer = await raw(rig, path, { host: `${app}.localhost:${rig.gatehouse.port}`, accept: 'application/json', cookie: `${APP}=${token}` });
        if (path.startsWith('/.gatehouse/')) expect(answer.status, `${app}${path}`).toBe(200);
        else expect(answer.status, `${app}${path}`).toBe(401);
        expect(answer.body).not.toContain('alice@example.com');
      }
    }
    expect(rig.upstream.last).toBe(before);
  });
});

/** What a replayed admin cookie could have changed: users, providers, apps, settings, live sessions. */
async function snapshot() {
  const { db } = rig.gatehouse.services.database;
  return {
    users: await db.selectFrom('users').select(['id', 'status', 'roles']).orderBy('id').execute(),
    providers: rig.gatehouse.services.providers.all().map((provider) => provider.id),
    apps: rig.gatehouse.services.apps.all().map((app) => app.id),
    liveSessions: (await db.selectFrom('sessions').select('id').where('revoked_at', 'is', null).orderBy('id').execute()).map((row) => row.id),
    settings: await db.selectFrom('settings').selectAll().execute(),
    providerEnabled: rig.gatehouse.services.providers.all().map((provider) => provider.enabled),
  };
}
