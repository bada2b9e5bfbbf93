import { afterAll, beforeAll, expect, it } from 'vitest';
import { open, post, raw, signIn, startSecurityRig, type SecurityRig, type SignedIn } from '../support/securityRig.js';

// Threat class: stale claims — a decision taken on what the IdP said at sign-in after the IdP has
// changed its mind. A group removed at the IdP must stop counting once the claims-refresh interval has
// passed (re-checked before the decision, on the hot path too, where sessions are served from a
// cache); a refresh the IdP refuses must end the session rather than keep the old claims; an admin's
// suspension must end every session and app token at once, not when a cache expires.

const INTERVAL_MS = 2_000;
let rig: SecurityRig;
beforeAll(async () => {
  rig = await startSecurityRig({ session: { claimsRefreshInterval: `${INTERVAL_MS / 1000}s` } });
});
afterAll(() => rig?.close());

const pastTheInterval = () => new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 200));

/** The status of an app request with the browser's app token, as an API client would send it (no redirects). */
async function appStatus(who: SignedIn, app: 'staff' | 'any', path = '/'): Promise<number> {
  const host = new URL(rig.apps[app]).host;
  const token = who.browser.cookie(new URL(rig.apps[app]).hostname, 'gatehouse_app');
  return (await raw(rig, path, { host, accept: 'application/json', cookie: `gatehouse_app=${token}` })).status;
}

it('a group removed at the IdP stops opening a group-gated app once the interval has passed', async () => {
  const bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
  expect((await open(bob.browser, `${rig.apps.staff}/`)).status).toBe(200);
  // Served from the session cache on the hot path from now on.
  expect(await appStatus(bob, 'staff')).toBe(200);
  await rig.setGroups('bob@example.com', []);
  try {
    await pastTheInterval();
    const before = rig.upstream.last;
    expect(await appStatus(bob, 'staff', '/after-removal')).toBe(403);
    expect(rig.upstream.last).toBe(before);
    // The session lives on (the refresh succeeded), with the IdP's current groups.
    const me = JSON.parse((await bob.browser.request(`${rig.portal}/api/session`)).body) as { user: { groups: string[] } };
    expect(me.user.groups).toEqual([]);
    expect(await appStatus(bob, 'any')).toBe(401); // never opened: no token, no session there
  } finally {
    await rig.setGroups('bob@example.com', ['staff']);
  }
});

it('a refresh the IdP refuses ends the session: portal, app host and hot path', async () => {
  rig.hostile.refreshMode = 'honest';
  const mallory = await signIn(rig, 'hostile');
  expect((await open(mallory.browser, `${rig.apps.any}/`)).status).toBe(200);
  expect(await appStatus(mallory, 'any')).toBe(200);
  rig.hostile.refreshMode = 'invalid_grant';
  try {
    await pastTheInterval();
    const before = rig.upstream.last;
    expect(await appStatus(mallory, 'any', '/after-refusal')).toBe(401);
    expect(rig.upstream.last).toBe(before);
    expect((await mallory.browser.request(`${rig.portal}/api/session`)).status).toBe(401);
    const row = await rig.gatehouse.services.database.db.selectFrom('sessions').select(['revoked_at', 'revoked_reason']).where('id', '=', mallory.sessionId).executeTakeFirstOrThrow();
    expect(row.revoked_at).not.toBeNull();
    expect(row.revoked_reason).toBe('refresh-failed');
  } finally {
    rig.hostile.refreshMode = 'honest';
  }
});

it("an admin's suspension ends the person's sessions at once, even those cached on the hot path", async () => {
  const alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
  const bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
  expect((await open(bob.browser, `${rig.apps.any}/`)).status).toBe(200);
  expect((await open(bob.browser, `${rig.apps.staff}/`)).status).toBe(200);
  // Within the interval: nothing is due, so only a revocation can stop these.
  expect(await appStatus(bob, 'any')).toBe(200);
  expect((await post(rig, alice, `/api/admin/users/${bob.userId}/suspend`)).status).toBe(204);
  const before = rig.upstream.last;
  expect(await appStatus(bob, 'any')).toBe(401);
  expect(await appStatus(bob, 'staff')).toBe(401);
  expect(rig.upstream.last).toBe(before);
  expect((await bob.browser.request(`${rig.portal}/api/session`)).status).toBe(401);
  // Signing in again is refused while suspended.
  await expect(signIn(rig, 'dev', 'bob@example.com', 'bob')).rejects.toThrow();
  expect((await post(rig, alice, `/api/admin/users/${bob.userId}/reactivate`)).status).toBe(204);
});
