import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AccessLog, AccessLogEntry } from '../../src/operations/accessLog.js';
import { NO_METRICS } from '../../src/operations/metrics.js';
import { portalArea, requestNotes, requestObserver } from '../../src/operations/observe.js';

/**
 * How the portal's requests are told apart for metrics and the access log (operations/observe.ts), and
 * what the portal's areas add to a request's line. The whole path, with real requests, is
 * test/integration/metrics.test.ts.
 */
describe('the area of a request the portal answers', () => {
  it.each([
    ['/api', 'api'],
    ['/api/session', 'api'],
    ['/api?x=1', 'api'],
    ['/oidc', 'oidc'],
    ['/oidc/token', 'oidc'],
    ['/oidc/interaction/abc', 'oidc'],
    ['/.well-known/openid-configuration', 'oidc'],
    ['/.well-known/openid-configuration?x=1', 'oidc'],
    ['/', 'portal'],
    ['/sign-in?rd=/oidc/authorize', 'portal'],
    ['/authorize/abc', 'portal'],
    // A path that only begins like one of them is the portal's (its 404), never counted as the API's or the OP's.
    ['/apiary', 'portal'],
    ['/oidcx/token', 'portal'],
    ['/.well-known/openid-configuration-x', 'portal'],
    ['/.well-known/oauth-authorization-server', 'portal'],
  ])('%s is %s', (url, area) => {
    expect(portalArea(url)).toBe(area);
  });
});

describe('the notes of the portal’s areas', () => {
  const written: AccessLogEntry[] = [];
  const accessLog: AccessLog = { write: (entry) => written.push(entry), close: async () => {} };
  const observer = requestObserver(NO_METRICS, accessLog)!;
  const notes = requestNotes(observer);
  const exchange = (url: string) => {
    const request = { method: 'POST', url, headers: { host: 'gatehouse.example.com' } } as IncomingMessage;
    const response = Object.assign(new EventEmitter(), { headersSent: true, statusCode: 200 }) as unknown as ServerResponse;
    const begun = observer.begin();
    observer.follow(request, response, begun);
    return { request, end: () => response.emit('close') };
  };
  const alice = { id: 'alice-id', email: 'alice@example.com' };
  const bob = { id: 'bob-id', email: 'bob@example.com' };

  it('a decision names its app, person and rule, in the area of the request’s target', () => {
    const { request, end } = exchange('/oidc/token');
    notes.decided(request, 'board', 'allowed', 'allow[0]', alice);
    end();
    expect(written.at(-1)).toMatchObject({ area: 'oidc', method: 'POST', target: '/oidc/token', app: 'board', decision: 'allowed', rule: 'allow[0]', user: alice, status: 200 });
  });

  it('the session’s person does not replace the one a decision was made for', () => {
    const { request, end } = exchange('/oidc/authorize');
    notes.decided(request, 'board', 'denied', 'deny[0]', alice);
    notes.user(request, bob);
    end();
    expect(written.at(-1)).toMatchObject({ app: 'board', decision: 'denied', user: alice });
  });

  it('the person of the session a request was answered with, and the app it concerned', () => {
    const { request, end } = exchange('/api/consent/abc');
    notes.user(request, bob);
    notes.app(request, 'board');
    end();
    expect(written.at(-1)).toMatchObject({ area: 'api', app: 'board', decision: undefined, user: bob });
  });

  it('says nothing of a request nobody follows', () => {
    const before = written.length;
    const stranger = { method: 'GET', url: '/oidc/token', headers: {} } as IncomingMessage;
    notes.decided(stranger, 'board', 'allowed', 'allow[0]', alice);
    notes.user(stranger, alice);
    notes.app(stranger, 'board');
    expect(written.length).toBe(before);
  });
});
