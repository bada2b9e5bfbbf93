import { describe, expect, it } from 'vitest';
import { grantIdFor } from '../../src/provide/access.js';
import { askedScopes, ownsConsent } from '../../src/provide/consent.js';
import type { CurrentSession } from '../../src/sessions/sessionResolver.js';

const client = { oidc: { scopes: ['openid', 'email', 'profile'] } } as never;
const current = { session: { id: 'session-a' }, user: { id: 'user-a' } } as CurrentSession;

describe('consent to a third-party client', () => {
  it('grants only the asked scopes the client may have, each once', () => {
    // Threat: a scope the client was not registered for (or no longer is, after a reload) reaching its
    // grant through the person's Allow: only the client's own scopes, as they are when answered, count.
    expect(askedScopes({ params: { scope: 'openid email groups offline_access email' } } as never, client)).toEqual(['openid', 'email']);
    expect(askedScopes({ params: {} } as never, client)).toEqual([]);
  });

  it('belongs only to the session and person the login step tied it to', () => {
    const step = (grantId: string | undefined, accountId = 'user-a', name = 'consent') => ({ grantId, prompt: { name }, session: { accountId } }) as never;
    expect(ownsConsent(step(grantIdFor('session-a')), current)).toBe(true);
    // Threat: IDOR. Another session's step (even of the same person), an untied one, another person's,
    // or a step at another prompt: not answerable here.
    expect(ownsConsent(step(grantIdFor('session-b')), current)).toBe(false);
    expect(ownsConsent(step(undefined), current)).toBe(false);
    expect(ownsConsent(step(grantIdFor('session-a'), 'user-b'), current)).toBe(false);
    expect(ownsConsent(step(grantIdFor('session-a'), 'user-a', 'login'), current)).toBe(false);
  });
});
