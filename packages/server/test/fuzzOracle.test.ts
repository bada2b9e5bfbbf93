import { describe, expect, it } from 'vitest';
import type { Answer } from './fuzz/client.js';
import type { FuzzRequest } from './fuzz/model.js';
import { judge } from './fuzz/oracle.js';

/**
 * The fuzz oracle's rule 7 on answers written by hand: what it must flag and what it must let be, so a
 * fuzz run that finds nothing means nothing was there, not that the rule cannot see it.
 */
const context = { allowedOrigins: new Set<string>() };
const request = (target: string, credential: FuzzRequest['credential'] = 'none'): FuzzRequest => ({ surface: 'portal', peer: 'trusted', method: 'GET', target, headers: [], body: '', credential });
const json = (body: unknown, status = 200): Answer => ({ status, headers: new Map([['content-type', ['application/json; charset=utf-8']]]), body: JSON.stringify(body), extra: 0 });
const rules = (target: string, answer: Answer, credential?: FuzzRequest['credential']) => judge(request(target, credential), answer, [], context).map((violation) => violation.rule);

describe('fuzz oracle, rule 7: nothing meant for admins reaches bob or a stranger', () => {
  // Threat: /readyz telling anyone the config path, a refused reload's problems, IdP errors naming internal hosts.
  it('/readyz: the status alone', () => {
    expect(rules('/readyz', json({ status: 'ready' }))).toEqual([]);
    expect(rules('/readyz', json({ status: 'ready', checks: { config: { file: '/etc/gatehouse.yaml' } } }))).toEqual(['details-for-non-admin']);
    expect(rules('/readyz', json({ status: 'unavailable', checks: {} }, 503), 'portal')).toContain('details-for-non-admin');
  });

  // Threat: the sign-in page's API naming any app host to a stranger.
  it('/api/providers: no app named without a portal session', () => {
    const named = json({ providers: [], returnTo: { href: 'http://wiki.localhost/', host: 'wiki.localhost', appName: 'Wiki' } });
    expect(rules('/api/providers?rd=http%3A%2F%2Fwiki.localhost%2F', named)).toEqual(['details-for-non-admin']);
    expect(rules('/api/providers?rd=http%3A%2F%2Fwiki.localhost%2F', named, 'portal')).toEqual([]);
    expect(rules('/api/providers', json({ providers: [], returnTo: { href: 'http://wiki.localhost/', host: null, appName: null } }))).toEqual([]);
  });

  // Threat: a person's activity carrying the rule that denied them (other people's emails) or a refusal's reason.
  it('/api/me/activity: no rule text, refusal reason or why', () => {
    expect(rules('/api/me/activity', json({ events: [{ summary: 'Denied access to Vault', detail: null }] }), 'portal')).toEqual([]);
    expect(rules('/api/me/activity', json({ events: [{ details: { reason: 'denied by deny[0]: emails boss@example.com' } }] }), 'portal')).toEqual(['details-for-non-admin']);
    expect(rules('/api/me/activity', json({ events: [{ details: { why: 'x' } }] }), 'portal')).toEqual(['details-for-non-admin']);
  });
});
