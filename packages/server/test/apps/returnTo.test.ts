import { describe, expect, it } from 'vitest';
import { checkReturnTo, validateReturnTo } from '../../src/apps/returnTo.js';

// Threat: open redirect. After sign-in Gatehouse redirects to a URL the request chose; an attacker who
// can pick it sends a freshly signed-in person to a look-alike site. Only the portal and configured
// app origins are destinations; anything else (or ambiguous) falls back to /account.
const policy = { portalOrigin: 'http://localhost:4180', appOrigins: new Set(['https://wiki.example.com']) };

describe('return-to validation', () => {
  it.each([
    ['/account', '/account'],
    ['/account?tab=sessions#top', '/account?tab=sessions#top'],
    ['/a/../account', '/account'],
    ['http://localhost:4180/account', '/account'],
    ['https://wiki.example.com/page?q=1', 'https://wiki.example.com/page?q=1'],
    // The OpenID Provider's login step: a sign-in it sent the person to comes back to it.
    ['/oidc/interaction/hYhzUP741Kh5TirSrgJdDvjrBu9d120plrdHczb7Mdl', '/oidc/interaction/hYhzUP741Kh5TirSrgJdDvjrBu9d120plrdHczb7Mdl'],
  ])('allows %s', (input, expected) => {
    expect(checkReturnTo(input, policy)).toBe(expected);
  });

  it.each([
    ['protocol-relative', '//evil.example'],
    ['protocol-relative with path', '//evil.example/account'],
    ['backslash', '/\\evil.example'],
    ['backslash twice', '\\\\evil.example'],
    ['tab smuggling', '/\t/evil.example'],
    ['newline smuggling', '/\n/evil.example'],
    ['leading space', ' //evil.example'],
    ['other origin', 'https://evil.example/'],
    ['look-alike app origin', 'https://wiki.example.com.evil.example/'],
    ['app origin over http', 'http://wiki.example.com/'],
    ['app origin other port', 'https://wiki.example.com:8443/'],
    ['credentials', 'https://user:pass@wiki.example.com/'],
    ['userinfo trick', 'http://localhost:4180@evil.example/'],
    ['javascript', 'javascript:alert(1)'],
    ['data', 'data:text/html,<script>alert(1)</script>'],
    ['scheme-relative sneaky', '/%2F%2Fevil.example'.replace('%2F%2F', '/')],
    ['reserved path', '/.gatehouse/sign-out'],
    ['reserved callback', 'http://localhost:4180/.gatehouse/callback/dev?code=x'],
    ['empty', ''],
    ['too long', `/${'a'.repeat(3000)}`],
    ['relative without slash', 'account'],
  ])('refuses %s', (_name, input) => {
    expect(checkReturnTo(input, policy)).toBeUndefined();
    expect(validateReturnTo(input, policy)).toBe('/account');
  });

  it('refuses non-strings', () => {
    expect(validateReturnTo(['/account', '//evil.example'], policy)).toBe('/account');
    expect(validateReturnTo(undefined, policy)).toBe('/account');
  });

  it('keeps an encoded slash inside the path on the portal', () => {
    // "/%2F%2Fevil.example" is a path on the portal, not another host: browsers do not decode it.
    expect(checkReturnTo('/%2F%2Fevil.example', policy)).toBe('/%2F%2Fevil.example');
  });
});
