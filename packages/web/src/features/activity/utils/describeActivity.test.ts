import type { ActivityEvent } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';
import { describeActivity } from './describeActivity';

function event(fields: Partial<ActivityEvent>): ActivityEvent {
  return { id: 'e1', time: '2026-01-01T00:00:00.000Z', type: 'sign_in', outcome: 'success', summary: 'Signed in', detail: null, app: null, provider: null, ip: null, device: null, ...fields };
}

describe('describeActivity', () => {
  it("shows the server's sentence and second line, with a picture by type", () => {
    expect(describeActivity(event({ type: 'sign_in', summary: 'Signed in with Development IdP' }))).toEqual({ title: 'Signed in with Development IdP', kind: 'sign-in', failed: false });
    expect(describeActivity(event({ type: 'sign_out', summary: 'Signed out everywhere', detail: '3 sessions ended.' }))).toEqual({
      title: 'Signed out everywhere',
      detail: '3 sessions ended.',
      kind: 'sign-out',
      failed: false,
    });
    expect(describeActivity(event({ type: 'session_revoked', summary: 'Session revoked by you' })).kind).toBe('revoke');
    expect(describeActivity(event({ type: 'identity_linked', summary: 'Linked Partner IdP' })).kind).toBe('link');
    expect(describeActivity(event({ type: 'identity_unlinked', summary: 'Unlinked Partner IdP' })).kind).toBe('unlink');
    expect(describeActivity(event({ type: 'backchannel_logout', summary: 'Partner IdP signed you out' })).kind).toBe('sign-out');
  });

  it('names the app a denial was about, and marks it failed', () => {
    expect(describeActivity(event({ type: 'access_denied', outcome: 'failure', summary: 'Denied access to Wiki', detail: "Your account is not among those this app's rules let in.", app: { name: 'Wiki' } }))).toEqual({
      title: 'Denied access to Wiki',
      detail: "Your account is not among those this app's rules let in.",
      kind: 'denied',
      failed: true,
    });
  });

  it('says where it came from when the server gives it', () => {
    const own = event({ ip: '203.0.113.7', device: { browser: 'Chrome 140', os: 'Linux', type: 'desktop' } });
    expect(describeActivity(own).origin).toBe('Chrome 140 on Linux, 203.0.113.7');
    expect(describeActivity(event({ ip: '203.0.113.7' })).origin).toBe('203.0.113.7');
    expect(describeActivity(event({})).origin).toBeUndefined();
  });

  it('gives types it does not know the generic picture, and a title even when the sentence is blank', () => {
    expect(describeActivity(event({ type: 'mfa_enrolled', summary: 'Account activity' }))).toEqual({ title: 'Account activity', kind: 'other', failed: false });
    expect(describeActivity(event({ type: 'constructor', summary: ' ' }))).toEqual({ title: 'Account activity', kind: 'other', failed: false });
  });
});
