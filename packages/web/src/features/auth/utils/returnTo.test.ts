import { describe, expect, it } from 'vitest';
import { signInStartHref } from './returnTo';

// Which return-to is accepted is the server's decision alone (packages/server/src/apps/returnTo.ts and its tests in
// packages/server/test/security/open-redirect.test.ts); the page only carries the verdict onward.
describe('signInStartHref', () => {
  it('appends the encoded return-to to the provider start URL', () => {
    expect(signInStartHref('/.gatehouse/sign-in/dev', '/account')).toBe('/.gatehouse/sign-in/dev?rd=%2Faccount');
    expect(signInStartHref('/.gatehouse/sign-in/dev', '/a?b=c&d=e')).toBe('/.gatehouse/sign-in/dev?rd=%2Fa%3Fb%3Dc%26d%3De');
  });

  it('encodes an app URL whole, so its own query stays inside rd', () => {
    expect(signInStartHref('/.gatehouse/sign-in/dev', 'http://whoami.localhost:4180/?a=1&b=2')).toBe(
      '/.gatehouse/sign-in/dev?rd=http%3A%2F%2Fwhoami.localhost%3A4180%2F%3Fa%3D1%26b%3D2',
    );
  });

  it('keeps a query the start URL already has', () => {
    expect(signInStartHref('/.gatehouse/sign-in/dev?prompt=login', '/')).toBe('/.gatehouse/sign-in/dev?prompt=login&rd=%2F');
  });
});
