import type { ActivityEvent } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';
import { describeActivity } from './describeActivity';

const dev = { id: 'dev', name: 'Development IdP' };
const partner = { id: 'partner', name: 'Partner IdP' };

function event(type: string, details: Record<string, unknown> = {}, outcome: ActivityEvent['outcome'] = 'success') {
  return describeActivity({ type, outcome, details });
}

describe('describeActivity', () => {
  it('says who signed in with what', () => {
    expect(event('sign_in', { provider: dev })).toEqual({ title: 'Signed in with Development IdP', kind: 'sign-in', failed: false });
    expect(event('sign_out')).toEqual({ title: 'Signed out', kind: 'sign-out', failed: false });
    expect(event('sign_out', { everywhere: false, sessions: 1 })).toEqual({ title: 'Signed out', kind: 'sign-out', failed: false });
    expect(event('sign_out', { everywhere: true, sessions: 3 })).toEqual({
      title: 'Signed out everywhere',
      detail: '3 sessions ended.',
      kind: 'sign-out',
      failed: false,
    });
  });

  it('explains a failed sign-in with the catalogue code, in words', () => {
    expect(event('sign_in_failed', { provider: partner, code: 'sign_in_denied' }, 'failure')).toEqual({
      title: 'Sign-in with Partner IdP failed',
      detail: 'Reason: the provider did not sign you in.',
      kind: 'sign-in',
      failed: true,
    });
    expect(event('sign_in_failed', { provider: partner, code: 'some_new_code' }, 'failure').detail).toBe('Reason: some new code.');
    expect(event('sign_in_failed', {}, 'failure')).toEqual({ title: 'Sign-in failed', kind: 'sign-in', failed: true });
    // The rule that refused, rather than the catalogue code's general words.
    expect(event('sign_in_failed', { provider: partner, code: 'sign_in_not_allowed', reason: 'email_unverified' }, 'failure').detail).toBe(
      'Reason: the email is not verified at the provider.',
    );
    expect(event('sign_in_failed', { provider: partner, code: 'sign_in_not_allowed', reason: 'not_a_known_reason' }, 'failure').detail).toBe(
      'Reason: this account may not sign in here.',
    );
    expect(event('sign_in', { provider: dev, code: 'sign_in_expired' }, 'failure').title).toBe('Sign-in with Development IdP failed');
  });

  it('says who ended a session, and why', () => {
    expect(event('session_revoked', { by: 'user', sessionId: 's1' }).title).toBe('Session revoked by you');
    expect(event('session_revoked', { by: 'admin', reason: 'account_suspended' })).toEqual({
      title: 'Session revoked by an administrator',
      detail: 'Reason: the account was suspended.',
      kind: 'revoke',
      failed: false,
    });
    expect(event('session_revoked', { by: 'idp' }).title).toBe('Session ended by your identity provider');
    expect(event('session_revoked', { by: 'system', reason: 'idle-timeout' }).detail).toBe('Reason: it was idle for too long.');
    expect(event('session_revoked', { by: 'martians' }).title).toBe('Session revoked');
    // The reasons the server records, as it spells them.
    expect(event('session_revoked', { by: 'user', reason: 'revoked-by-user' }).detail).toBeUndefined();
    expect(event('session_revoked', { by: 'user', reason: 'sign-out-everywhere-else' }).detail).toBe('Reason: signed out everywhere else.');
    expect(event('session_revoked', { by: 'system', reason: 'refresh-failed' }).detail).toBe('Reason: the provider no longer confirmed the sign-in.');
  });

  it('names linked and unlinked providers', () => {
    expect(event('identity_linked', { provider: partner }).title).toBe('Linked Partner IdP');
    expect(event('identity_unlinked', { provider: partner }).title).toBe('Unlinked Partner IdP');
    expect(event('identity_linked', { provider: partner, code: 'identity_conflict' }, 'failure')).toEqual({
      title: 'Linking Partner IdP failed',
      detail: 'Reason: the email address belongs to another account.',
      kind: 'link',
      failed: true,
    });
    expect(event('identity_unlinked', { provider: partner, sessionsEnded: 0 }).detail).toBeUndefined();
    expect(event('identity_unlinked', { provider: partner, sessionsEnded: 2 }).detail).toBe('The 2 sessions signed in with it ended.');
    expect(event('identity_linked', { provider: 'partner' }).title).toBe('Linked partner');
    expect(event('identity_linked', {}).title).toBe('Linked an identity provider');
  });

  it('counts the sessions a back-channel logout ended', () => {
    expect(event('backchannel_logout', { provider: dev, sessions: 2 })).toEqual({
      title: 'Development IdP signed you out',
      detail: '2 sessions ended.',
      kind: 'sign-out',
      failed: false,
    });
    expect(event('backchannel_logout', { provider: dev, sessions: 1 }).detail).toBe('1 session ended.');
    expect(event('backchannel_logout', { sessions: 'many' })).toEqual({ title: 'Your identity provider signed you out', kind: 'sign-out', failed: false });
  });

  it('gives types it does not know a generic line, and ignores details of the wrong shape', () => {
    expect(event('mfa_enrolled')).toEqual({ title: 'Account activity: mfa enrolled', kind: 'other', failed: false });
    expect(event('', {}, 'failure')).toEqual({ title: 'Account activity', detail: 'It did not succeed.', kind: 'other', failed: true });
    expect(describeActivity({ type: 'sign_in', outcome: 'success', details: null as unknown as Record<string, unknown> }).title).toBe('Signed in');
    expect(event('sign_in', { provider: { name: 42 } }).title).toBe('Signed in');
  });
});
