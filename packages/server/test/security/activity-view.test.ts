import { routes } from '@gatehouse/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiArea } from '../../src/api/index.js';
import { apiAreaDeps, areaHarness, type AreaHarness, type Person } from '../support/areaHarness.js';

/**
 * Threat: admin-only details disclosed to the person. "Recent activity" (`GET /api/me/activity`)
 * answered each audit event with its details as recorded: the deny rule that refused the person, with
 * the other people's emails it lists; a refused sign-in's reason and the sentence written for admins;
 * an administrator's IP address; what an IdP said when a refresh failed. The person now gets a view of
 * their own: what happened in a sentence, the app and the provider by name, and where it came from
 * only when it was their own doing.
 */
describe("a person's activity", () => {
  let harness: AreaHarness;
  let ann: Person;
  let root: Person;
  const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
  const from = (ip: string, userAgent = firefox) => ({ ip, headers: { 'user-agent': userAgent } });

  beforeAll(async () => {
    harness = await areaHarness(
      { apps: [{ id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } }] },
      async (parts, app) => {
        await app.register(apiArea, apiAreaDeps(parts));
      },
    );
    ann = await harness.signIn('ann@example.com');
    root = await harness.signIn('root@example.com', { roles: ['admin'] });
    const { audit } = harness;
    const dev = { id: 'dev', name: 'Dev IdP' };
    // Oldest first: the activity lists them newest first.
    await audit.record({
      type: 'backchannel_logout',
      targetUserId: ann.userId,
      providerId: 'dev',
      request: from('192.0.2.50', 'idp-server/1.0'),
      details: { provider: dev, sessions: 1 },
    });
    await audit.record({
      type: 'session_revoked',
      targetUserId: ann.userId,
      sessionId: ann.sessionId,
      providerId: 'dev',
      request: from('198.51.100.3'),
      details: { by: 'system', reason: 'refresh-failed', detail: 'invalid_grant from https://idp.internal.example:8443/token', sessionId: ann.sessionId },
    });
    await audit.record({
      type: 'user_suspended',
      actorUserId: root.userId,
      targetUserId: ann.userId,
      sessionId: root.sessionId,
      request: from('10.9.9.9'),
      details: { before: { status: 'active' }, after: { status: 'suspended' }, sessionsEnded: 2 },
    });
    await audit.record({
      type: 'session_revoked',
      actorUserId: root.userId,
      targetUserId: ann.userId,
      sessionId: root.sessionId,
      request: from('10.9.9.9'),
      details: { by: 'admin', reason: 'revoked-by-admin', sessionId: ann.sessionId },
    });
    await audit.record({
      type: 'sign_in_failed',
      outcome: 'failure',
      targetUserId: ann.userId,
      providerId: 'dev',
      request: from('198.51.100.2'),
      details: {
        provider: dev,
        code: 'sign_in_not_allowed',
        reason: 'domain_not_allowed_by_organization',
        why: 'example.com is not in the allowed domains (set by the security team on ticket SEC-1234)',
        userId: ann.userId,
      },
    });
    await audit.record({
      type: 'access_denied',
      outcome: 'failure',
      actorUserId: ann.userId,
      targetUserId: ann.userId,
      sessionId: ann.sessionId,
      appId: 'wiki',
      request: from('198.51.100.1'),
      details: { app: { id: 'wiki', name: 'Wiki' }, reason: 'denied by deny[0]: emails bob@example.com, carol@example.com' },
    });
  });
  afterAll(() => harness?.close());

  const activity = () => harness.app.inject({ method: 'GET', url: `${routes.me.getMyActivity.path}?pageSize=50`, headers: { cookie: ann.cookie } });

  it('never shows the rule, a refusal’s reason, other people, an administrator’s or an IdP’s address', async () => {
    const answer = await activity();
    expect(answer.statusCode).toBe(200);
    for (const secret of ['bob@example.com', 'carol@example.com', 'root@example.com', 'deny[0]', 'domain_not_allowed', 'SEC-1234', 'allowed domains', '10.9.9.9', '192.0.2.50', 'idp-server', 'invalid_grant', 'idp.internal', root.userId]) {
      expect(answer.body, secret).not.toContain(secret);
    }
    for (const event of answer.json().events) expect(Object.keys(event).sort()).toEqual(['app', 'detail', 'device', 'id', 'ip', 'outcome', 'provider', 'summary', 'time', 'type']);
  });

  it('says what happened in the person’s words, naming the app and the provider', async () => {
    const events = answer(await activity());
    expect(events).toHaveLength(6);
    expect(events).toEqual(expect.arrayContaining([
      {
        type: 'access_denied',
        outcome: 'failure',
        summary: 'Denied access to Wiki',
        detail: "Your account is not among those this app's rules let in.",
        app: { name: 'Wiki' },
        provider: null,
        ip: '198.51.100.1',
        device: { browser: 'Firefox 140', os: 'Linux', type: 'desktop' },
      },
      {
        type: 'sign_in_failed',
        outcome: 'failure',
        summary: 'Sign-in with Dev IdP failed',
        detail: 'This account may not sign in here.',
        app: null,
        provider: { id: 'dev', name: 'Dev IdP' },
        ip: '198.51.100.2',
        device: { browser: 'Firefox 140', os: 'Linux', type: 'desktop' },
      },
      { type: 'session_revoked', outcome: 'success', summary: 'Session revoked by an administrator', detail: null, app: null, provider: null, ip: null, device: null },
      { type: 'user_suspended', outcome: 'success', summary: 'Your account was suspended by an administrator', detail: '2 sessions ended.', app: null, provider: null, ip: null, device: null },
      {
        type: 'session_revoked',
        outcome: 'success',
        summary: 'Session ended by Gatehouse',
        detail: 'Your identity provider no longer confirmed your sign-in.',
        app: null,
        provider: { id: 'dev', name: 'Dev IdP' },
        ip: '198.51.100.3',
        device: { browser: 'Firefox 140', os: 'Linux', type: 'desktop' },
      },
      { type: 'backchannel_logout', outcome: 'success', summary: 'Dev IdP signed you out', detail: '1 session ended.', app: null, provider: { id: 'dev', name: 'Dev IdP' }, ip: null, device: null },
    ]));
  });

  /** The events without their id and time (recorded within one millisecond here, so in no set order). */
  function answer(response: Awaited<ReturnType<typeof activity>>) {
    return (response.json().events as Array<Record<string, unknown>>).map(({ id: _id, time: _time, ...rest }) => rest);
  }
});
