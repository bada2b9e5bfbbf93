import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyConfig } from '../../../src/reload.js';
import { startHostileIdp, type HostileIdp } from '../support/hostileIdp.js';
import { open, post, raw, signIn, startSecurityRig, type SecurityRig, type SignedIn } from '../support/securityRig.js';

// Threat class: what an IdP says after sign-in, and what an operator changes later, escaping the rules of
// who may sign in (issue #25). Every live session must be one a fresh sign-in would admit now, with what
// its IdP last said: a claims re-check that the rules refuse ends the session (and adopts nothing of the
// answer), and narrowing the rules ends the sessions they no longer admit at once, whichever way they are
// narrowed (the console, a reload). Against the real development IdP, whose test control API plays a
// person editing their profile there (Keycloak's, Okta's or Auth0's self-service pages).

const INTERVAL_MS = 2_000;
let rig: SecurityRig;
let second: HostileIdp;
beforeAll(async () => {
  [rig, second] = await Promise.all([startSecurityRig({ session: { claimsRefreshInterval: `${INTERVAL_MS / 1000}s` } }), startHostileIdp('gatehouse')]);
});
afterAll(async () => {
  await rig?.close();
  await second?.close();
});

const pastTheInterval = () => new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 300));
const db = () => rig.gatehouse.services.database.db;

async function appStatus(who: SignedIn, app: 'any' | 'staff' = 'any', path = '/'): Promise<number> {
  const host = new URL(rig.apps[app]).host;
  const token = who.browser.cookie(new URL(rig.apps[app]).hostname, 'gatehouse_app');
  return (await raw(rig, path, { host, accept: 'application/json', cookie: `gatehouse_app=${token}` })).status;
}

async function revocation(sessionId: string) {
  const row = await db().selectFrom('sessions').select(['revoked_reason']).where('id', '=', sessionId).executeTakeFirstOrThrow();
  const events = await db().selectFrom('audit_events').select(['details']).where('type', '=', 'session_revoked').where('session_id', '=', sessionId).execute();
  return { reason: row.revoked_reason, details: events.map((event) => JSON.parse(event.details) as Record<string, unknown>) };
}

const emailOf = async (userId: string) => (await db().selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email;

it.each([
  ['unverified', false, 'email_unverified'],
  ['verified (an address reused by the IdP)', true, 'email_of_another_user'],
] as const)("an IdP that now gives bob alice's address, %s, ends bob's session and never makes him alice", async (_name, verified, refusal) => {
  const alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
  const bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
  expect((await open(bob.browser, `${rig.apps.any}/`)).status).toBe(200);
  await rig.setEmail('bob@example.com', 'alice@example.com', verified);
  try {
    await pastTheInterval();
    const before = rig.upstream.last;
    expect(await appStatus(bob)).toBe(401);
    expect(rig.upstream.last).toBe(before);
    // The person is told why, in their words, where the sign-in page asks.
    const ended = await bob.browser.request(`${rig.portal}/api/session`);
    expect(ended.status).toBe(401);
    expect(JSON.parse(ended.body)).toMatchObject({
      code: 'session_ended',
      detail: 'Your session ended: Development IdP now says something about your account that the rules of who may sign in here do not accept. Sign in again.',
    });
    // Nothing of the answer was adopted: bob is still bob, alice still alice (admin by admins.emails).
    expect(await emailOf(bob.userId)).toBe('bob@example.com');
    expect(await emailOf(alice.userId)).toBe('alice@example.com');
    const identity = await db().selectFrom('identities').select(['email']).where('user_id', '=', bob.userId).executeTakeFirstOrThrow();
    expect(identity.email).toBe('bob@example.com');
    expect(await revocation(bob.sessionId)).toMatchObject({ reason: 'claims-refused', details: [{ by: 'system', reason: 'claims-refused', refusal }] });
    // Signing in again with that answer is refused the same way.
    await expect(signIn(rig, 'dev', 'bob@example.com', 'bob')).rejects.toThrow(/answered (403|409)/);
    expect((await alice.browser.request(`${rig.portal}/api/session`)).status).toBe(200);
  } finally {
    await rig.setEmail('bob@example.com', 'bob@example.com', true);
  }
});

it('an address of its own the IdP no longer vouches for ends the session at the re-check', async () => {
  const bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
  expect((await open(bob.browser, `${rig.apps.any}/`)).status).toBe(200);
  await rig.setEmail('bob@example.com', 'bob.new@example.com', false);
  try {
    await pastTheInterval();
    expect(await appStatus(bob)).toBe(401);
    expect(await emailOf(bob.userId)).toBe('bob@example.com');
    expect((await revocation(bob.sessionId)).reason).toBe('claims-refused');
  } finally {
    await rig.setEmail('bob@example.com', 'bob@example.com', true);
  }
});

it('a verified new address of its own is adopted at the re-check (the IdP vouches for it)', async () => {
  const bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
  await rig.setEmail('bob@example.com', 'robert@example.com', true);
  try {
    await pastTheInterval();
    expect((await open(bob.browser, `${rig.apps.any}/`)).status).toBe(200);
    expect(await emailOf(bob.userId)).toBe('robert@example.com');
  } finally {
    await rig.setEmail('bob@example.com', 'bob@example.com', true);
    await pastTheInterval();
    await open(bob.browser, `${rig.apps.any}/`);
  }
});

// Threat: a partner an operator removes keeping their sessions, up to a week.
it("narrowing the organisation's allowed domains ends the sessions it no longer admits, at once", async () => {
  rig.hostile.extraClaims = { email: 'mallory@partner.example' };
  try {
    const alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
    const mallory = await signIn(rig, 'hostile');
    expect((await open(mallory.browser, `${rig.apps.any}/`)).status).toBe(200);
    expect(await appStatus(mallory)).toBe(200);
    const put = await alice.browser.request(`${rig.portal}/api/admin/sign-in-settings`, {
      method: 'PUT',
      headers: { origin: rig.portal, 'x-csrf-token': alice.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ allowedDomains: ['example.com'], createUsers: true }),
    });
    expect(put.status, put.body).toBe(200);
    // Within the interval: nothing was due, only the review ends it.
    expect(await appStatus(mallory)).toBe(401);
    expect(JSON.parse((await mallory.browser.request(`${rig.portal}/api/session`)).body)).toMatchObject({
      code: 'session_ended',
      detail: 'Your session ended: the rules of who may sign in here changed, and your account no longer meets them. Sign in again.',
    });
    expect(await revocation(mallory.sessionId)).toMatchObject({
      reason: 'admission-changed',
      details: [{ by: 'system', changedBy: 'console', reason: 'admission-changed', refusal: 'domain_not_allowed_by_organization' }],
    });
    expect((await alice.browser.request(`${rig.portal}/api/session`)).status).toBe(200);
    const settings = await db().selectFrom('audit_events').select(['details']).where('type', '=', 'sign_in_settings_updated').orderBy('time', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(settings.details)).toMatchObject({ sessionsEnded: 1 });
    const reset = await alice.browser.request(`${rig.portal}/api/admin/sign-in-settings`, {
      method: 'PUT',
      headers: { origin: rig.portal, 'x-csrf-token': alice.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ allowedDomains: [], createUsers: true }),
    });
    expect(reset.status).toBe(200);
  } finally {
    rig.hostile.extraClaims = {};
  }
});

it("a reload narrowing a provider's allowed domains ends the sessions it no longer admits", async () => {
  rig.hostile.extraClaims = { email: 'mallory@partner.example' };
  const { services } = rig.gatehouse;
  const before = services.running.current;
  try {
    const mallory = await signIn(rig, 'hostile');
    const bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
    expect((await open(mallory.browser, `${rig.apps.any}/`)).status).toBe(200);
    const narrowed = { ...before, providers: before.providers.map((provider) => (provider.id === 'hostile' ? { ...provider, allowedDomains: ['example.com'] } : provider)) };
    const result = await applyConfig(services, narrowed, rig.gatehouse.app.log, { trigger: 'SIGHUP' }, { lead: true });
    expect(result).toMatchObject({ outcome: 'applied', sessionsEnded: 1 });
    expect(await appStatus(mallory)).toBe(401);
    expect(await revocation(mallory.sessionId)).toMatchObject({ reason: 'admission-changed', details: [{ changedBy: 'reload', refusal: 'domain_not_allowed_by_provider' }] });
    expect((await bob.browser.request(`${rig.portal}/api/session`)).status).toBe(200);
  } finally {
    rig.hostile.extraClaims = {};
    await applyConfig(services, before, rig.gatehouse.app.log, { trigger: 'SIGHUP' }, { lead: true });
  }
});

it("a console provider's narrowed rules end its sessions that no longer pass", async () => {
  const alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
  const definition = { id: 'partner', name: 'Partner', issuer: second.issuer, clientId: 'gatehouse', clientSecret: 'partner-secret', createUsers: true, pushedAuthorizationRequests: 'never' };
  const created = await post(rig, alice, '/api/admin/providers', definition);
  expect(created.status, created.body).toBe(201);
  expect((await post(rig, alice, '/api/admin/providers/partner/publish', { untested: true })).status).toBe(200);
  second.extraClaims = { email: 'eve@partner.example' };
  const eve = await signIn(rig, 'partner');
  expect((await open(eve.browser, `${rig.apps.any}/`)).status).toBe(200);
  const put = await alice.browser.request(`${rig.portal}/api/admin/providers/partner`, {
    method: 'PUT',
    headers: { origin: rig.portal, 'x-csrf-token': alice.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ ...definition, allowedDomains: ['partner-corp.example'] }),
  });
  expect(put.status, put.body).toBe(200);
  expect(await appStatus(eve)).toBe(401);
  expect(await revocation(eve.sessionId)).toMatchObject({ reason: 'admission-changed', details: [{ changedBy: 'console', refusal: 'domain_not_allowed_by_provider' }] });
  const updated = await db().selectFrom('audit_events').select(['details']).where('type', '=', 'provider_updated').orderBy('time', 'desc').executeTakeFirstOrThrow();
  expect(JSON.parse(updated.details)).toMatchObject({ sessionsEnded: 1 });
});

// Threat: an email only userinfo sends, unverified, taking the ID token's email_verified: true.
it("userinfo's own email is not verified by the ID token's email_verified", async () => {
  rig.hostile.userinfoClaims = { email: 'ceo@example.com', email_verified: undefined };
  try {
    await expect(signIn(rig, 'hostile')).rejects.toThrow(/answered 403/);
    const failed = await db().selectFrom('audit_events').select(['details']).where('type', '=', 'sign_in_failed').orderBy('time', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(failed.details)).toMatchObject({ code: 'sign_in_not_allowed', reason: 'email_unverified' });
  } finally {
    rig.hostile.userinfoClaims = {};
  }
});

// Threat: an ID token issued to another client of the same IdP (OIDC Core §3.1.3.7), replayed here.
it('an ID token whose azp names another client is refused, at sign-in and at refresh', async () => {
  rig.hostile.extraClaims = { azp: 'another-client' };
  try {
    await expect(signIn(rig, 'hostile')).rejects.toThrow(/answered 502/);
    const failed = await db().selectFrom('audit_events').select(['details']).where('type', '=', 'sign_in_failed').orderBy('time', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(failed.details)).toMatchObject({ code: 'invalid_response' });
  } finally {
    rig.hostile.extraClaims = {};
  }
  const mallory = await signIn(rig, 'hostile');
  expect((await open(mallory.browser, `${rig.apps.any}/`)).status).toBe(200);
  rig.hostile.extraClaims = { azp: 'another-client' };
  try {
    await pastTheInterval();
    expect(await appStatus(mallory)).toBe(401);
    expect((await revocation(mallory.sessionId)).reason).toBe('refresh-failed');
  } finally {
    rig.hostile.extraClaims = {};
  }
});

// Threat: old claims kept for ever by keeping the IdP from answering.
it('an IdP that stays unreachable past session.maxClaimsAge ends the session', async () => {
  const mallory = await signIn(rig, 'hostile');
  expect((await open(mallory.browser, `${rig.apps.any}/`)).status).toBe(200);
  rig.hostile.refreshMode = 'unavailable';
  try {
    await pastTheInterval();
    expect(await appStatus(mallory)).toBe(200);
    await pastTheInterval();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await appStatus(mallory)).toBe(401);
    expect(await revocation(mallory.sessionId)).toMatchObject({ reason: 'claims-unconfirmed', details: [{ reason: 'claims-unconfirmed' }] });
    expect(JSON.parse((await mallory.browser.request(`${rig.portal}/api/session`)).body)).toMatchObject({ code: 'session_ended', detail: expect.stringContaining('Controllable IdP could not confirm your account for too long') });
  } finally {
    rig.hostile.refreshMode = 'honest';
  }
});
