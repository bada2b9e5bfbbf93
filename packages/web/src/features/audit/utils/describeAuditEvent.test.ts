import { describe, expect, it } from 'vitest';
import { describeAuditDetails, eventTypeLabel } from './describeAuditEvent';

describe('eventTypeLabel', () => {
  it('names known types and turns unknown ones into words', () => {
    expect(eventTypeLabel('sign_in_failed')).toBe('Failed sign-in');
    expect(eventTypeLabel('policy_changed')).toBe('Policy changed');
    expect(eventTypeLabel('')).toBe('Event');
  });

  it('names the provider and sign-in settings events', () => {
    expect(eventTypeLabel('provider_created')).toBe('Provider added');
    expect(eventTypeLabel('provider_disabled')).toBe('Provider turned off');
    expect(eventTypeLabel('provider_tested')).toBe('Provider tested');
    expect(eventTypeLabel('sign_in_settings_updated')).toBe('Sign-in settings changed');
  });
});

describe('describeAuditDetails', () => {
  it('names the app of a denial', () => {
    expect(describeAuditDetails({ type: 'access_denied', providerId: null, appId: null, details: { app: { id: 'whoami', name: 'Whoami' } } })).toBe('App: Whoami');
  });

  it('shows what an admin changed', () => {
    expect(
      describeAuditDetails({
        type: 'user_suspended',
        providerId: null,
        appId: null,
        details: { before: { status: 'active' }, after: { status: 'suspended' }, sessionsRevoked: 2 },
      }),
    ).toBe('status: active → suspended · sessions revoked: 2');
    expect(describeAuditDetails({ type: 'admin_granted', providerId: null, appId: null, details: { before: { admin: false }, after: { admin: true } } })).toBe(
      'admin: false → true',
    );
    expect(describeAuditDetails({ type: 'admin_granted', providerId: null, appId: null, details: { before: { roles: [] }, after: { roles: ['admin'] } } })).toBe(
      'roles: none → admin',
    );
    expect(describeAuditDetails({ type: 'access_denied', providerId: null, appId: 'whoami', details: {} })).toBe('App: whoami');
  });

  it('gives the provider, the reason and the rest, and ignores odd shapes', () => {
    expect(describeAuditDetails({ type: 'sign_in_failed', providerId: 'dev', appId: null, details: { code: 'account_suspended' } })).toBe(
      'Provider: dev · Code: account suspended',
    );
    expect(describeAuditDetails({ type: 'session_revoked', providerId: null, appId: null, details: { by: 'admin', reason: 'revoked_by_admin', nested: { a: 1 } } })).toBe(
      'By: admin · Reason: revoked by admin',
    );
    expect(describeAuditDetails({ type: 'x', providerId: null, appId: null, details: null as unknown as Record<string, unknown> })).toBe('');
  });

  it('names the reason a sign-in was refused, and the rule in the server’s words', () => {
    const details = { provider: { id: 'dev', name: 'Dev' }, code: 'sign_in_not_allowed', reason: 'email_malformed', why: 'the email Dev sent has more than one @' };
    expect(describeAuditDetails({ type: 'sign_in_failed', providerId: 'dev', appId: null, details })).toBe(
      'Provider: Dev · Reason: the provider sent an email Gatehouse cannot use · Code: sign in not allowed · Why: the email Dev sent has more than one @',
    );
  });
});
