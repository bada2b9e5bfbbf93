import { describe, expect, it } from 'vitest';
import { DEFAULT_RETURN_TO, sanitizeReturnTo, signInStartHref } from './returnTo';

describe('sanitizeReturnTo', () => {
  it('keeps paths on this host, with their query and fragment', () => {
    expect(sanitizeReturnTo('/account')).toBe('/account');
    expect(sanitizeReturnTo('/admin/users?page=2#top')).toBe('/admin/users?page=2#top');
    expect(sanitizeReturnTo('/')).toBe('/');
  });

  it('falls back to the default when there is nothing to return to', () => {
    expect(sanitizeReturnTo(null)).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo(undefined)).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo('')).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo(null, '/')).toBe('/');
  });

  // Threat: open redirect to another site after signing in.
  it.each([
    ['an absolute URL', 'https://evil.example/'],
    ['a scheme-relative URL', '//evil.example/path'],
    ['a backslash that browsers read as a slash', '/\\evil.example'],
    ['a tab the URL parser drops', '/\t/evil.example'],
    ['a newline the URL parser drops', '/\n/evil.example'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a relative path', 'account'],
    ['an overlong value', `/${'a'.repeat(3000)}`],
  ])('refuses %s', (_label, value) => {
    expect(sanitizeReturnTo(value)).toBe(DEFAULT_RETURN_TO);
  });

  it('does not send a signed-in person back to the sign-in or signed-out page', () => {
    expect(sanitizeReturnTo('/sign-in?rd=/account')).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo('/signed-out')).toBe(DEFAULT_RETURN_TO);
  });
});

describe('signInStartHref', () => {
  it('appends the encoded return-to to the provider start URL', () => {
    expect(signInStartHref('/.gatehouse/sign-in/dev', '/account')).toBe('/.gatehouse/sign-in/dev?rd=%2Faccount');
    expect(signInStartHref('/.gatehouse/sign-in/dev', '/a?b=c&d=e')).toBe('/.gatehouse/sign-in/dev?rd=%2Fa%3Fb%3Dc%26d%3De');
  });

  it('keeps a query the start URL already has', () => {
    expect(signInStartHref('/.gatehouse/sign-in/dev?prompt=login', '/')).toBe('/.gatehouse/sign-in/dev?prompt=login&rd=%2F');
  });
});
