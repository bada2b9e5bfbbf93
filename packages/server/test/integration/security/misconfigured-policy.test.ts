import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { startGatehouse } from '../support/gatehouse.js';
import { open, post, raw, signIn, startSecurityRig, type SecurityRig, type SignedIn } from '../support/securityRig.js';

// Threat class: a misconfigured policy failing open — a policy that cannot be parsed read as "no
// rules", an empty allow list read as "allow", a console app whose stored definition was corrupted
// (a bad write, a hand edit, a restore from an older version) served with whatever was in memory, or a
// session from a provider that is no longer configured still honoured. Each must deny: the upstream
// never sees the request.

let rig: SecurityRig;
let alice: SignedIn;
let bob: SignedIn;
beforeAll(async () => {
  rig = await startSecurityRig();
  // The console apps this suite creates resolve to loopback in its browsers.
  rig.loopbackHosts.push('broken.localhost', 'emptied.localhost', 'fresh.localhost', 'tighten.localhost');
  alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
  bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
}, 60_000);
afterAll(() => rig?.close());

const badPolicies: Array<[string, unknown]> = [
  ['no policy', undefined],
  ['an empty allow list', { allow: [] }],
  ['only deny rules', { deny: [{ emails: ['bob@example.com'] }] }],
  ['a rule kind that does not exist', { allow: [{ everyone: true }] }],
  ['two kinds in one rule', { allow: [{ anyUser: true, groups: ['admins'] }] }],
  ['a group list that is a string', { allow: [{ groups: 'admins' }] }],
  ['an empty group list', { allow: [{ groups: [] }] }],
  ['anyUser false', { allow: [{ anyUser: false }] }],
  ['a policy that is a string', 'allow everyone'],
  ['an unknown top-level key', { allow: [{ anyUser: true }], default: 'allow' }],
];

describe('a policy that cannot be parsed', () => {
  it('in the config file: Gatehouse refuses to start', () => {
    for (const [what, policy] of badPolicies) {
      const app = { id: 'bad', name: 'Bad', publicUrl: 'http://bad.localhost:4180', upstream: 'http://127.0.0.1:9', ...(policy === undefined ? {} : { policy }) };
      expect(() => parseConfig({ publicUrl: 'http://localhost:4180', apps: [app] }, { env: {} }), what).toThrow(/apps\[0\]\.policy/);
    }
  });

  it('in the console: refused with bad_request, and the app does not exist afterwards', async () => {
    for (const [index, [what, policy]] of badPolicies.entries()) {
      const id = `bad${index}`;
      const answer = await post(rig, alice, '/api/admin/apps', { id, name: 'Bad', publicUrl: `http://${id}.localhost:${rig.gatehouse.port}`, upstream: rig.upstream.url, ...(policy === undefined ? {} : { policy }) });
      expect(answer.status, what).toBe(400);
      expect(JSON.parse(answer.body).code, what).toBe('bad_request');
      expect(rig.gatehouse.services.apps.get(id), what).toBeUndefined();
    }
  });
});

describe('a console app whose stored definition is corrupt', () => {
  const host = (id: string) => `${id}.localhost:${rig.gatehouse.port}`;

  async function createApp(id: string, policy: unknown): Promise<void> {
    const answer = await post(rig, alice, '/api/admin/apps', { id, name: id, publicUrl: `http://${host(id)}`, upstream: rig.upstream.url, policy });
    expect(answer.status, answer.body).toBe(201);
  }

  async function reaches(who: SignedIn, id: string): Promise<boolean> {
    const marker = `/${id}-${Math.random().toString(36).slice(2)}`;
    const hop = await open(who.browser, `http://${host(id)}${marker}`);
    return hop.status === 200 && rig.upstream.last?.url === marker;
  }

  const corrupt = (id: string, definition: string) => rig.gatehouse.services.database.db.updateTable('apps').set({ definition }).where('id', '=', id).execute();

  it('is left out when the apps are loaded again: its host opens nothing, and the other apps still load', async () => {
    await createApp('broken', { allow: [{ anyUser: true }] });
    await createApp('emptied', { allow: [{ anyUser: true }] });
    expect(await reaches(bob, 'broken')).toBe(true);
    expect(await reaches(bob, 'emptied')).toBe(true);
    const stored = (await rig.gatehouse.services.database.db.selectFrom('apps').select('definition').where('id', '=', 'broken').executeTakeFirstOrThrow()).definition;
    await corrupt('broken', stored.slice(0, stored.indexOf('"policy"') + 12)); // truncated mid-policy: not JSON
    const emptied = JSON.parse(stored) as Record<string, unknown>;
    await corrupt('emptied', JSON.stringify({ ...emptied, id: 'emptied', publicUrl: `http://${host('emptied')}`, policy: { allow: [] } }));
    // Any change in the console loads the stored apps again.
    await createApp('fresh', { allow: [{ anyUser: true }] });
    expect(await reaches(bob, 'fresh')).toBe(true);
    const before = rig.upstream.last;
    for (const id of ['broken', 'emptied']) {
      expect(rig.gatehouse.services.apps.get(id), id).toBeUndefined();
      expect(await reaches(bob, id), id).toBe(false);
      const api = await raw(rig, '/x', { host: host(id), accept: 'application/json', cookie: bob.browser.cookieHeader('localhost') });
      expect(api.status, id).toBeLessThan(500);
    }
    expect(rig.upstream.last).toBe(before);
  });

  it("does not stop an admin's tightened policy from taking effect on another app", async () => {
    await createApp('tighten', { allow: [{ anyUser: true }] });
    expect(await reaches(bob, 'tighten')).toBe(true);
    await corrupt('fresh', '{not json');
    const answer = await rig.gatehouse.services.database.db.selectFrom('apps').select('definition').where('id', '=', 'tighten').executeTakeFirstOrThrow();
    const definition = JSON.parse(answer.definition) as Record<string, unknown>;
    const updated = await alice.browser.request(`${rig.portal}/api/admin/apps/tighten`, {
      method: 'PUT',
      headers: { origin: rig.portal, 'x-csrf-token': alice.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ ...definition, policy: { allow: [{ emails: ['alice@example.com'] }] } }),
    });
    expect(updated.status, updated.body).toBe(200);
    expect(await reaches(bob, 'tighten')).toBe(false);
    expect(await reaches(alice, 'tighten')).toBe(true);
  });

  it('does not stop Gatehouse from starting with it left out', async () => {
    const restarted = await startGatehouse({ store: rig.gatehouse.store, providers: [] });
    try {
      for (const id of ['broken', 'emptied', 'fresh']) expect(restarted.services.apps.get(id), id).toBeUndefined();
      expect(restarted.services.apps.get('tighten')).toBeDefined();
    } finally {
      await restarted.close();
    }
  });
});

describe('a provider that disappeared', () => {
  it("ends its sessions: after a restart without it in the config, its people's cookies open nothing", async () => {
    const mallory = await signIn(rig, 'hostile');
    expect((await open(mallory.browser, `${rig.apps.any}/`)).status).toBe(200);
    // The same data, the hostile provider removed from the configuration (claims are fresh: no check is due).
    const restarted = await startGatehouse({
      store: rig.gatehouse.store,
      providers: rig.gatehouse.services.running.current.providers.filter((provider) => provider.id !== 'hostile') as never,
    });
    try {
      const cookie = `gatehouse_session=${mallory.browser.cookie('localhost', 'gatehouse_session')}`;
      const answer = await fetch(`${restarted.url}/api/session`, { headers: { cookie } });
      expect(answer.status).toBe(401);
      const row = await restarted.services.database.db.selectFrom('sessions').select(['revoked_at', 'revoked_reason']).where('id', '=', mallory.sessionId).executeTakeFirstOrThrow();
      expect(row.revoked_reason).toBe('provider-disabled');
      // People of the providers still configured are unaffected.
      const bobs = await fetch(`${restarted.url}/api/session`, { headers: { cookie: `gatehouse_session=${bob.browser.cookie('localhost', 'gatehouse_session')}` } });
      expect(bobs.status).toBe(200);
    } finally {
      await restarted.close();
    }
  });
});
