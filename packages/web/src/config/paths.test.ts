import { endpoints, pages, routes, urlOf, withQuery } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';

// The addresses the front end links to and calls, as the contract spells them.

describe('pages.signIn.href', () => {
  it('carries the return-to, readable and still encoded where it must be', () => {
    expect(pages.signIn.href()).toBe('/sign-in');
    expect(pages.signIn.href('/account')).toBe('/sign-in?rd=/account');
    expect(pages.signIn.href('/admin/users?q=a&b=c d')).toBe('/sign-in?rd=/admin/users%3Fq%3Da%26b%3Dc%20d');
    expect(new URL(pages.signIn.href('/x?y=1&z=2'), 'https://h').searchParams.get('rd')).toBe('/x?y=1&z=2');
  });
});

describe('the account routes and endpoints.linkUrl', () => {
  it('encode the id as one path segment', () => {
    expect(urlOf(routes.me.revokeMySession, { sessionId: 's_1' })).toBe('/api/me/sessions/s_1');
    expect(urlOf(routes.me.unlinkMyIdentity, { identityId: '../admin' })).toBe('/api/me/identities/..%2Fadmin');
    expect(endpoints.linkUrl('partner')).toBe('/.gatehouse/link/partner');
    expect(endpoints.linkUrl('a/b?c')).toBe('/.gatehouse/link/a%2Fb%3Fc');
  });
});

describe('withQuery and the admin paths', () => {
  it('leaves out empty values and encodes the rest', () => {
    expect(withQuery('/api/admin/users')).toBe('/api/admin/users');
    expect(withQuery('/api/admin/users', { query: '', status: undefined, page: null })).toBe('/api/admin/users');
    expect(withQuery('/api/admin/users', { query: 'bob & co', page: 2 })).toBe('/api/admin/users?query=bob+%26+co&page=2');
    expect(urlOf(routes.admin.listUsers, undefined, { query: 'bob & co', status: undefined, page: 2 })).toBe('/api/admin/users?query=bob+%26+co&page=2');
    expect(withQuery(pages.adminAudit.href(), { type: 'sign_in' })).toBe('/admin/audit?type=sign_in');
  });

  it('encode ids as one path segment', () => {
    expect(pages.adminUser.href('u/1')).toBe('/admin/users/u%2F1');
    expect(urlOf(routes.admin.suspendUser, { userId: 'u 1' })).toBe('/api/admin/users/u%201/suspend');
    expect(urlOf(routes.admin.revokeSession, { sessionId: '../x' })).toBe('/api/admin/sessions/..%2Fx');
  });
});

describe('the consent page and its routes', () => {
  it('encode the step uid as one path segment', () => {
    expect(pages.authorize.href('aBc_1-2')).toBe('/authorize/aBc_1-2');
    expect(pages.authorize.href('../account')).toBe('/authorize/..%2Faccount');
    expect(urlOf(routes.consent.getConsent, { uid: 'u/1' })).toBe('/api/consent/u%2F1');
    expect(urlOf(routes.consent.allowConsent, { uid: 'u1' })).toBe('/api/consent/u1/allow');
    expect(urlOf(routes.consent.denyConsent, { uid: 'u1' })).toBe('/api/consent/u1/deny');
  });
});
