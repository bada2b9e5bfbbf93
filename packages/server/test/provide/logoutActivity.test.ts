import { describe, expect, it } from 'vitest';
import { activityView } from '../../src/api/activityView.js';
import type { AuditEntry } from '../../src/audit/auditLog.js';

/** What a person sees of the back-channel logouts of their sessions in "Recent activity" (api/activityView.ts). */
describe('back-channel logouts in a person’s activity', () => {
  const names = { provider: (id: string) => id, app: (id: string) => (id === 'wiki' ? 'Wiki' : undefined) };
  const entry = (type: string, outcome: 'success' | 'failure', details: Record<string, unknown>): AuditEntry => ({
    id: 'e1',
    time: 1,
    type,
    outcome,
    actorUserId: null,
    targetUserId: 'u1',
    sessionId: 's1',
    providerId: null,
    appId: 'wiki',
    ip: null,
    userAgent: null,
    details,
  });

  it('says which app was signed out', () => {
    expect(activityView(entry('oidc_logout_delivered', 'success', { app: { id: 'wiki', name: 'Wiki' }, attempts: 1, reason: 'sign-out' }), 'u1', names)).toMatchObject({
      summary: 'Signed out of Wiki',
      detail: null,
      app: { name: 'Wiki' },
      ip: null,
      device: null,
    });
  });

  // Threat: the admins' details (an app's internal address, in what went wrong) disclosed to the person.
  it('tells the person an app may still have them signed in, without what went wrong', () => {
    const view = activityView(entry('oidc_logout_failed', 'failure', { app: { id: 'wiki', name: 'Wiki' }, attempts: 40, reason: 'sign-out', error: 'refused to connect to wiki.internal (10.0.0.5): no answer' }), 'u1', names);
    expect(view).toMatchObject({ summary: 'Wiki could not be told that you signed out', detail: 'You may still be signed in there: sign out in the app itself.', outcome: 'failure' });
    expect(JSON.stringify(view)).not.toMatch(/10\.0\.0\.5|wiki\.internal|attempts|40/);
  });
});
