import { describe, expect, it } from 'vitest';
import { answersOnAnyHost, canonicalLocation, hostVerdict, portalHosts } from '../src/http/canonicalHost.js';
import { promptForSwitch } from '../src/providers/kinds/types.js';

const verdict = (origin: string, listenPort: number, host: string | undefined) => {
  const { canonical, aliases } = portalHosts({ portalOrigin: origin, listenPort, isForwardAuth: () => false });
  return hostVerdict(host, canonical, aliases);
};

describe('the portal host', () => {
  it('a loopback publicUrl: its loopback names at its port and at the listening port are aliases', () => {
    expect(verdict('http://localhost:4180', 4180, 'localhost:4180')).toBe('portal');
    expect(verdict('http://localhost:4180', 4180, 'LOCALHOST:4180')).toBe('portal');
    expect(verdict('http://localhost:4180', 4180, '127.0.0.1:4180')).toBe('alias');
    expect(verdict('http://localhost:4180', 4180, '[::1]:4180')).toBe('alias');
    expect(verdict('http://localhost:8080', 4180, '127.0.0.1:4180')).toBe('alias');
    // Threat: DNS rebinding / host header injection. Anything else is unknown, however close.
    for (const host of ['127.0.0.1:4181', 'localhost', 'localhost:4180.', 'evil.localhost:4180', 'localhost:4180@evil.example', '', undefined]) {
      expect(verdict('http://localhost:4180', 4180, host), String(host)).toBe('unknown');
    }
  });

  it('a public publicUrl has no aliases: only its own host, with or without its default port', () => {
    expect(verdict('https://auth.example.com', 4180, 'auth.example.com')).toBe('portal');
    expect(verdict('https://auth.example.com', 4180, 'auth.example.com:443')).toBe('portal');
    expect(verdict('https://auth.example.com', 4180, '127.0.0.1:4180')).toBe('unknown');
    expect(verdict('https://auth.example.com', 4180, 'localhost:4180')).toBe('unknown');
  });

  it("redirects only to publicUrl's origin", () => {
    // Threat: open redirect. A network-path, backslash or userinfo target stays a path of the portal.
    for (const target of ['//evil.example/x', '/\\evil.example', '/@evil.example', '/..//evil.example', '/%2f%2fevil.example']) {
      expect(new URL(canonicalLocation('http://localhost:4180', target)!).origin, target).toBe('http://localhost:4180');
    }
    expect(canonicalLocation('http://localhost:4180', '/sign-in?rd=%2Faccount')).toBe('http://localhost:4180/sign-in?rd=%2Faccount');
    expect(canonicalLocation('http://localhost:4180', 'http://evil.example/')).toBeUndefined();
    expect(canonicalLocation('http://localhost:4180', '*')).toBeUndefined();
  });
});

describe('the OpenID Provider on other host names', () => {
  it('answers only the endpoints apps call server to server, on their exact paths', () => {
    // Apps in containers reach Gatehouse by an internal name for discovery, tokens, userinfo and keys.
    for (const url of ['/.well-known/openid-configuration', '/oidc/token', '/oidc/userinfo', '/oidc/jwks', '/oidc/introspect', '/oidc/revoke', '/oidc/par', '/oidc/token?x=1']) {
      expect(answersOnAnyHost(url), url).toBe(true);
    }
    // Threat: a browser flow (which sets cookies and starts sign-ins) served under a name the portal's
    // cookies do not belong to, or a path that only starts like an allowed one.
    for (const url of ['/oidc/authorize', '/oidc/interaction/abc', '/oidc/logout', '/oidc/logout/confirm', '/oidc/token/x', '/oidc/tokenx', '/oidc/TOKEN', '/oidc//token', '/oidc/x/../token']) {
      expect(answersOnAnyHost(url), url).toBe(false);
    }
  });
});

describe('the prompt of a switch of account', () => {
  it("is the kind's, unless the operator's own prompt already lets the person choose", () => {
    expect(promptForSwitch(undefined, 'select_account')).toBe('select_account');
    expect(promptForSwitch(undefined, 'login')).toBe('login');
    expect(promptForSwitch('consent', 'select_account')).toBe('select_account consent');
    expect(promptForSwitch('none', 'login')).toBe('login');
    expect(promptForSwitch('login', 'select_account')).toBe('login');
    expect(promptForSwitch('login consent', 'select_account')).toBe('login consent');
  });
});
