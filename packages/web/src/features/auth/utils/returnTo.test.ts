import { describe, expect, it } from 'vitest';
import { DEFAULT_RETURN_TO, returnToHost, sanitizeReturnTo, signInStartHref } from './returnTo';

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

  it('keeps absolute http and https URLs of an app, in their parsed form (the server checks the origin)', () => {
    expect(sanitizeReturnTo('http://whoami.localhost:4180/')).toBe('http://whoami.localhost:4180/');
    expect(sanitizeReturnTo('http://whoami.localhost:4180')).toBe('http://whoami.localhost:4180/');
    expect(sanitizeReturnTo('https://wiki.example.com/page?id=7#intro')).toBe('https://wiki.example.com/page?id=7#intro');
    expect(sanitizeReturnTo('HTTPS://Wiki.Example.com/Page')).toBe('https://wiki.example.com/Page');
    expect(sanitizeReturnTo('http://[::1]:8080/x')).toBe('http://[::1]:8080/x');
  });

  it('reads the app URL from the query as the server encodes it', () => {
    const rd = new URLSearchParams('rd=http%3A%2F%2Fwhoami.localhost%3A4180%2F').get('rd');
    expect(sanitizeReturnTo(rd)).toBe('http://whoami.localhost:4180/');
  });

  // Threat: open redirect to another site, or script, after signing in.
  it.each([
    ['a scheme-relative URL', '//evil.example/path'],
    ['a scheme-relative URL to a bare host', '//evil'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a javascript: URL in capitals', 'JavaScript:alert(1)'],
    ['a javascript: URL with slashes', 'javascript://%0aalert(1)'],
    ['a data: URL', 'data:text/html,<script>alert(1)</script>'],
    ['a vbscript: URL', 'vbscript:msgbox(1)'],
    ['an ftp: URL', 'ftp://files.example/'],
    ['a file: URL', 'file:///etc/passwd'],
    ['an http URL without slashes', 'https:evil.example'],
    ['an http URL without a host', 'https:///evil.example'],
    ['user and password in the URL', 'https://user:pass@x'],
    ['a user name in the URL', 'https://whoami.localhost@evil.example/'],
    ['an empty userinfo', 'https://@evil.example/'],
    ['a backslash in an absolute URL', 'https://evil.example\\@whoami.localhost/'],
    ['a tab in an absolute URL', 'https://who\tami.localhost/'],
    ['leading whitespace', ' https://whoami.localhost/'],
    ['a host the URL parser refuses', 'https://exa mple.com/'],
    ['an overlong absolute URL', `https://whoami.localhost/${'a'.repeat(2048)}`],
    ['a backslash that browsers read as a slash', '/\\evil.example'],
    ['a tab the URL parser drops', '/\t/evil.example'],
    ['a newline the URL parser drops', '/\n/evil.example'],
    ['a relative path', 'account'],
    ['an overlong value', `/${'a'.repeat(3000)}`],
  ])('refuses %s', (_label, value) => {
    expect(sanitizeReturnTo(value)).toBe(DEFAULT_RETURN_TO);
  });

  it('does not send a signed-in person back to the sign-in or signed-out page', () => {
    expect(sanitizeReturnTo('/sign-in?rd=/account')).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo('/signed-out')).toBe(DEFAULT_RETURN_TO);
  });

  it('holds an absolute URL to this origin to the same rule', () => {
    const ownOrigin = 'http://localhost:4180';
    expect(sanitizeReturnTo('http://localhost:4180/sign-in?rd=/account', undefined, { ownOrigin })).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo('http://localhost:4180/signed-out', undefined, { ownOrigin })).toBe(DEFAULT_RETURN_TO);
    expect(sanitizeReturnTo('http://localhost:4180/account', undefined, { ownOrigin })).toBe('http://localhost:4180/account');
    expect(sanitizeReturnTo('http://whoami.localhost:4180/sign-in', undefined, { ownOrigin })).toBe('http://whoami.localhost:4180/sign-in');
  });
});

describe('returnToHost', () => {
  it('names the host of an app URL, and nothing for a path here', () => {
    expect(returnToHost('http://whoami.localhost:4180/')).toBe('whoami.localhost:4180');
    expect(returnToHost('https://wiki.example.com/page')).toBe('wiki.example.com');
    expect(returnToHost('/account')).toBeUndefined();
  });
});

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
