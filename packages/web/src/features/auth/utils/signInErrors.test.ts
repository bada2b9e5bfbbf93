import { signInErrorCodes } from '@gatehouse/contract/paths';
import { describe, expect, it } from 'vitest';
import { describeSignInError, providersToOffer, readSignInFailure, sanitizeReference } from './signInErrors';

describe('describeSignInError', () => {
  it.each([
    ['provider_unavailable', "We couldn't reach Development IdP. Try again in a minute."],
    ['sign_in_expired', 'This sign-in took too long or was already used. Start again.'],
    ['sign_in_denied', 'Development IdP did not sign you in. Try again, or choose another way to sign in.'],
    ['invalid_response', 'The answer from Development IdP could not be verified.'],
    ['identity_conflict', 'Sign in with your usual provider, then link this one from your account.'],
    ['account_suspended', 'Your account is suspended. Contact your administrator.'],
    ['csrf_failed', 'This request could not be verified. Reload the page and try again.'],
    ['rate_limited', 'Too many sign-in attempts. Wait a minute, then try again.'],
    ['bad_request', 'The sign-in request could not be understood. Start again.'],
    ['internal', 'Something went wrong on our side. Try again, and quote the reference if it keeps happening.'],
  ])('explains %s in the catalogue words', (code, message) => {
    const described = describeSignInError(code, { provider: 'Development IdP' });
    expect(described.code).toBe(code);
    expect(described.message).toBe(message);
    expect(described.title.length).toBeGreaterThan(0);
  });

  it('has words of its own for every code the contract lists', () => {
    for (const code of signInErrorCodes) {
      const described = describeSignInError(code);
      expect(described.code, code).toBe(code);
      expect(described.title, code).not.toBe('Sign-in did not complete');
    }
  });

  it('words an unlinked session identity as a notice, not a failure', () => {
    const described = describeSignInError('identity_unlinked', { provider: 'Partner IdP' });
    expect(described.notice).toBe(true);
    expect(described.message).toBe('Partner IdP no longer signs in to your account, so that session ended. Sign in with one of your other providers.');
    expect(describeSignInError('sign_in_expired').notice).toBe(false);
  });

  it('names no provider it was not told about', () => {
    expect(describeSignInError('provider_unavailable').message).toBe(
      "We couldn't reach the sign-in provider. Try again in a minute.",
    );
    expect(describeSignInError('sign_in_denied').message).toMatch(/^The sign-in provider did not sign you in/);
  });

  // Threat: content injection through a crafted /sign-in?error=... link. An unknown code, including
  // one named after an Object.prototype member, gets the generic sentence and never echoes the code.
  it.each(['no_such_code', 'constructor', '__proto__', 'toString', '<b>Call +1 555</b>'])(
    'gives the generic message for unknown code %j',
    (code) => {
      const described = describeSignInError(code);
      expect(described.code).toBe('unknown');
      expect(described.title).toBe('Sign-in did not complete');
      expect(described.message).not.toContain(code);
    },
  );
});

describe('sanitizeReference', () => {
  it('keeps reference ids as the server makes them', () => {
    expect(sanitizeReference('3f9a0c1b2d4e')).toBe('3f9a0c1b2d4e');
  });

  it.each([null, '', 'call us at +1 555 0100', 'a'.repeat(65), '<script>'])('drops %j', (value) => {
    expect(sanitizeReference(value)).toBeUndefined();
  });
});

describe('readSignInFailure', () => {
  it('is undefined without ?error=', () => {
    expect(readSignInFailure(new URLSearchParams('rd=/account'))).toBeUndefined();
  });

  it('reads the code, the reference and the provider id', () => {
    expect(readSignInFailure(new URLSearchParams('error=sign_in_expired&ref=abc123&provider=dev'))).toEqual({
      code: 'sign_in_expired',
      reference: 'abc123',
      providerId: 'dev',
    });
  });

  it('drops a reference or provider id that does not look like one', () => {
    expect(readSignInFailure(new URLSearchParams('error=internal&ref=not%20a%20ref&provider=..%2Fx'))).toEqual({
      code: 'internal',
      reference: undefined,
      providerId: undefined,
    });
  });
});

describe('providersToOffer', () => {
  const providers = [{ id: 'dev' }, { id: 'partner' }];

  it('offers every provider after a failure', () => {
    expect(providersToOffer(providers, { code: 'sign_in_expired', reference: undefined, providerId: 'dev' })).toEqual(providers);
    expect(providersToOffer(providers, undefined)).toEqual(providers);
  });

  it('leaves out the provider whose identity was just unlinked', () => {
    expect(providersToOffer(providers, { code: 'identity_unlinked', reference: undefined, providerId: 'dev' })).toEqual([{ id: 'partner' }]);
  });
});
