import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type ConfigError, parseConfig } from '../src/config/load.js';
import { forwardedRequest } from '../src/proxy/forwardAuth.js';
import { encodeHeaderValue, identityHeaders, isIdentityHeader } from '../src/authorize/identityHeaders.js';
import { policySchema } from '@gatehouse/contract';
import { evaluatePolicy, type PolicySubject } from '../src/authorize/policy.js';
import { isPublicPath, normalisePath } from '../src/authorize/publicPaths.js';
import { forwardedForOf } from '../src/http/trustedProxies.js';
import { downstreamResponseHeaders, upstreamRequestHeaders, withoutOurCookies } from '../src/proxy/upstreamHeaders.js';

const alice: PolicySubject = { email: 'alice@example.com', groups: ['staff', 'admins'], roles: [], claims: { department: 'eng', level: 3, tags: ['a', 'b'] } };
// A subject's email is canonical (the contract's definitions/email.ts: ASCII lower case), as every sign-in stores it.
const bob: PolicySubject = { email: 'bob@corp.example', groups: ['staff'], roles: ['admin'], claims: { department: 'ops' } };

describe('policy evaluation (deny wins; default deny; the deciding rule is named)', () => {
  const policy = (input: unknown) => policySchema.parse(input);

  it.each<[string, unknown, PolicySubject, boolean, string]>([
    ['any signed-in user', { allow: [{ anyUser: true }] }, alice, true, 'allowed by allow[0]: any signed-in user'],
    ['email match (a listed email is written in canonical form)', { allow: [{ emails: ['BOB@corp.example'] }] }, bob, true, 'allowed by allow[0]: emails bob@corp.example'],
    ['email miss', { allow: [{ emails: ['carol@example.com'] }] }, alice, false, 'denied: no allow rule matched'],
    ['domain match', { allow: [{ domains: ['corp.example'] }] }, bob, true, 'allowed by allow[0]: domains corp.example'],
    ['a sub-domain is not the domain', { allow: [{ domains: ['example.com'] }] }, { ...alice, email: 'a@evil-example.com' }, false, 'denied: no allow rule matched'],
    ['group match', { allow: [{ groups: ['admins'] }] }, alice, true, 'allowed by allow[0]: groups admins'],
    ['group miss', { allow: [{ groups: ['admins'] }] }, bob, false, 'denied: no allow rule matched'],
    ['groups are case-sensitive', { allow: [{ groups: ['Admins'] }] }, alice, false, 'denied: no allow rule matched'],
    ['role match', { allow: [{ roles: ['admin'] }] }, bob, true, 'allowed by allow[0]: roles admin'],
    ['claim = value', { allow: [{ claim: { name: 'department', value: 'eng' } }] }, alice, true, 'allowed by allow[0]: claim department = "eng"'],
    ['claim type matters', { allow: [{ claim: { name: 'level', value: '3' } }] }, alice, false, 'denied: no allow rule matched'],
    ['claim array contains', { allow: [{ claim: { name: 'tags', value: 'b' } }] }, alice, true, 'allowed by allow[0]: claim tags = "b"'],
    ['missing claim', { allow: [{ claim: { name: 'nope', value: 'x' } }] }, alice, false, 'denied: no allow rule matched'],
    ['deny wins over allow', { allow: [{ anyUser: true }], deny: [{ groups: ['admins'] }] }, alice, false, 'denied by deny[0]: groups admins'],
    ['deny not matching leaves allow', { allow: [{ anyUser: true }], deny: [{ emails: ['carol@example.com'] }] }, alice, true, 'allowed by allow[0]: any signed-in user'],
    ['first matching allow rule decides', { allow: [{ emails: ['x@y.example'] }, { groups: ['staff'] }, { anyUser: true }] }, bob, true, 'allowed by allow[1]: groups staff'],
  ])('%s', (_name, input, subject, allow, reason) => {
    const decision = evaluatePolicy(policy(input), subject);
    expect(decision.allow).toBe(allow);
    expect(decision.reason).toBe(reason);
  });

  function problems(policyInput: unknown): string[] {
    try {
      parseConfig({ apps: [{ id: 'a', name: 'A', publicUrl: 'http://a.localhost:4180', upstream: 'http://localhost:1', policy: policyInput }] }, { env: {} });
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  }

  // Nothing misconfigured ever allows: a policy Gatehouse cannot evaluate fails at load.
  it.each([
    ['unknown rule kind', { allow: [{ everyone: true }] }],
    ['two kinds in one rule', { allow: [{ groups: ['a'], emails: ['a@b.example'] }] }],
    ['empty allow list', { allow: [] }],
    ['empty group list', { allow: [{ groups: [] }] }],
    ['unknown role', { allow: [{ roles: ['superuser'] }] }],
    ['not an email', { allow: [{ emails: ['alice'] }] }],
    ['anyUser false', { allow: [{ anyUser: false }] }],
    ['unknown top-level key', { allow: [{ anyUser: true }], mode: 'permissive' }],
  ])('%s fails at config load', (_name, input) => {
    expect(problems(input)[0]).toMatch(/^apps\[0\]\.policy/);
  });
});

describe('identity headers', () => {
  // Threat: header spoofing. Every spelling an upstream framework might read as ours is removed.
  it.each(['x-gatehouse-user', 'X-Gatehouse-User', 'X-GATEHOUSE-EMAIL', 'x_gatehouse_user', 'X_Gatehouse_Groups', 'x-gatehouse_assertion', 'x-gatehouse-whatever'])(
    '%s is ours',
    (name) => expect(isIdentityHeader(name)).toBe(true),
  );
  it.each(['x-gatehouses', 'x-gate-house-user', 'gatehouse-user', 'x-forwarded-user', 'x-gatehouse'])('%s is not ours', (name) => {
    expect(isIdentityHeader(name)).toBe(false);
  });

  it('strips every incoming copy before adding the real ones', () => {
    const incoming = { 'x-gatehouse-email': 'evil', x_gatehouse_user: 'evil', 'x-gatehouse_groups': 'admins', 'X-Gatehouse-Name': 'evil', accept: '*/*' };
    const context = { forwardedFor: '127.0.0.1', clientAddress: '127.0.0.1', publicOrigin: 'http://app.localhost:4180', preserveHost: false };
    const anonymous = upstreamRequestHeaders(incoming, { ...context, identity: undefined });
    expect(Object.keys(anonymous).filter((name) => name.toLowerCase().replace(/_/g, '-').startsWith('x-gatehouse'))).toEqual([]);
    const signedIn = upstreamRequestHeaders(incoming, { ...context, identity: { 'x-gatehouse-email': 'alice@example.com' } });
    expect(signedIn['x-gatehouse-email']).toBe('alice@example.com');
    expect(signedIn.x_gatehouse_user).toBeUndefined();
    expect(signedIn.accept).toBe('*/*');
  });

  it('encodes values that are not plain ASCII (RFC 8187 ext-value), never failing', () => {
    expect(encodeHeaderValue('Alice Example')).toBe('Alice Example');
    expect(encodeHeaderValue('李雷')).toBe("UTF-8''%E6%9D%8E%E9%9B%B7");
    expect(encodeHeaderValue('Zoë\r\nX-Injected: 1')).toBe("UTF-8''Zo%C3%AB%0D%0AX-Injected%3A%201");
    const headers = identityHeaders({ userId: 'u1', email: 'li@example.com', name: '李雷', groups: ['staff', 'a,b', 'équipe'], assertion: 'jwt' });
    expect(headers['x-gatehouse-name']).toBe("UTF-8''%E6%9D%8E%E9%9B%B7");
    expect(headers['x-gatehouse-groups']).toBe("staff,UTF-8''a%2Cb,UTF-8''%C3%A9quipe");
  });

  it('passes at most 100 groups upstream', () => {
    const groups = Array.from({ length: 150 }, (_, i) => `g${i}`);
    expect(identityHeaders({ userId: 'u', email: 'e@x.example', name: 'n', groups, assertion: '' })['x-gatehouse-groups']!.split(',')).toHaveLength(100);
  });

  it('all five headers are always present, empty without a user', () => {
    expect(identityHeaders(undefined)).toEqual({ 'x-gatehouse-user': '', 'x-gatehouse-email': '', 'x-gatehouse-name': '', 'x-gatehouse-groups': '', 'x-gatehouse-assertion': '' });
  });
});

describe('what goes upstream', () => {
  it('removes Gatehouse cookies in both spellings, keeps the app’s own', () => {
    expect(withoutOurCookies('gatehouse_app=x; theme=dark; __Host-gatehouse_session=y; gatehouse_app_state=z; lang=en')).toBe('theme=dark; lang=en');
    expect(withoutOurCookies('gatehouse_app=x')).toBeUndefined();
  });

  it('drops upstream Set-Cookie lines using Gatehouse names', () => {
    expect(downstreamResponseHeaders({ 'set-cookie': ['gatehouse_app=planted; Path=/', 'theme=dark', '__Host-gatehouse_session=x'] })['set-cookie']).toEqual(['theme=dark']);
    expect(downstreamResponseHeaders({ 'set-cookie': ['gatehouse_app=planted'], 'content-type': 'text/plain' })).toEqual({ 'content-type': 'text/plain' });
  });

  // RFC 9110 §7.6.1: connection-specific headers end at each hop, both ways, including those named by Connection.
  it('never forwards hop-by-hop headers, in either direction', () => {
    const up = upstreamRequestHeaders(
      { host: 'app.localhost:4180', connection: 'keep-alive, X-Hop', 'x-hop': '1', 'keep-alive': 'timeout=5', te: 'trailers', upgrade: 'h2c', expect: '100-continue', 'transfer-encoding': 'chunked', 'proxy-authorization': 'Basic x', accept: 'text/html' },
      { forwardedFor: '127.0.0.1', clientAddress: '127.0.0.1', publicOrigin: 'http://app.localhost:4180', preserveHost: false, identity: undefined },
    );
    expect(Object.keys(up).sort()).toEqual(['accept', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'x-real-ip']);
    const down = downstreamResponseHeaders({ connection: 'close, x-secret', 'x-secret': 'y', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', 'content-type': 'text/html', 'x-app': 'kept' });
    expect(down).toEqual({ 'content-type': 'text/html', 'x-app': 'kept' });
  });

  it('keeps the public Host only when the app asks for it, and sends the X-Forwarded-For it is given', () => {
    const context = { forwardedFor: '203.0.113.7, 10.0.0.9', clientAddress: '203.0.113.7', publicOrigin: 'https://app.example.com', identity: undefined };
    expect(upstreamRequestHeaders({ host: 'app.example.com' }, { ...context, preserveHost: false }).host).toBeUndefined();
    const preserved = upstreamRequestHeaders({ host: 'evil.example', 'x-forwarded-for': '198.51.100.1' }, { ...context, preserveHost: true });
    expect(preserved.host).toBe('app.example.com');
    expect(preserved['x-forwarded-for']).toBe('203.0.113.7, 10.0.0.9');
    expect(preserved['x-forwarded-proto']).toBe('https');
  });

  // Threat: forwarded-header spoofing. Only a trusted proxy's X-Forwarded-For is passed on.
  it('passes on X-Forwarded-For only from a trusted proxy, always ending in the peer', () => {
    const forwardedFor = forwardedForOf(['10.0.0.0/8']);
    const from = (remoteAddress: string, xff?: string) =>
      forwardedFor({ socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } } as unknown as IncomingMessage);
    expect(from('10.0.0.9', '203.0.113.7')).toBe('203.0.113.7, 10.0.0.9');
    expect(from('10.0.0.9', '198.51.100.1, 203.0.113.7')).toBe('198.51.100.1, 203.0.113.7, 10.0.0.9');
    expect(from('10.0.0.9')).toBe('10.0.0.9');
    expect(from('192.0.2.5', '203.0.113.7')).toBe('192.0.2.5');
    expect(forwardedForOf([])({ socket: { remoteAddress: '10.0.0.9' }, headers: { 'x-forwarded-for': '1.2.3.4' } } as unknown as IncomingMessage)).toBe('10.0.0.9');
  });

  // Threat: forwarded-header spoofing. X-Forwarded-* describe the request as Gatehouse saw it.
  it('sets X-Forwarded-* itself and drops Forwarded', () => {
    const headers = upstreamRequestHeaders(
      { host: 'a.example', forwarded: 'for=1.2.3.4;host=evil', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'x-gatehouse-email': 'evil' },
      { forwardedFor: '127.0.0.1', clientAddress: '127.0.0.1', publicOrigin: 'http://app.localhost:4180', preserveHost: false, identity: { 'x-gatehouse-email': 'alice@example.com' } },
    );
    expect(headers['x-forwarded-host']).toBe('app.localhost:4180');
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers.forwarded).toBeUndefined();
    expect(headers['x-gatehouse-email']).toBe('alice@example.com');
  });
});

describe('public paths match on the normalised path only', () => {
  it.each<[string, string | undefined]>([
    ['/a/b', '/a/b'],
    ['/a//b', '/a/b'],
    ['//a//b', undefined],
    ['/a/./b', '/a/b'],
    ['/a/../b', '/b'],
    ['/../../b', '/b'],
    ['/a\\b', undefined],
    ['/a/b/', '/a/b/'],
    ['/%61/b', '/a/b'],
    ['/a%2Fb', undefined],
    ['/a%2fb', undefined],
    ['/a%5Cb', undefined],
    ['/a%00b', undefined],
    ['/a%zz', undefined],
    ['a/b', undefined],
    ['/a?x=/public', '/a'],
    // What an upstream might read differently is never public.
    ['/a/..;/b', undefined],
    ['/a/.;x/b', undefined],
    ['/a/%2e%2e;/b', undefined],
    ['/a;x/b', '/a;x/b'],
    ['/a/%252e%252e/b', undefined],
    ['/a%252Fb', undefined],
    ['/a%09b', undefined],
    ['/a/..%0d/b', undefined],
    ['/a%7Fb', undefined],
    ['/100%25', '/100%'],
  ])('%s → %s', (raw, normalised) => {
    expect(normalisePath(raw)).toBe(normalised);
  });

  it.each<[string, boolean]>([
    ['/public/x', true],
    ['/public//x', true],
    // Threat: a leading "//" is a host to a WHATWG URL parser ("//public/x" is "/x" there).
    ['//public//x', false],
    ['/public/./x', true],
    ['/public/../admin', false],
    ['/public%2F..%2Fadmin', false],
    ['/public\\..\\admin', false],
    ['/admin?/public/x', false],
    ['/PUBLIC/x', false],
    ['/publicx', false],
    ['/health', true],
    ['/health/', false],
    ['/public/..;/admin', false],
    ['/public/%252e%252e/admin', false],
  ])('%s public: %s', (path, expected) => {
    expect(isPublicPath(path, ['/public/*', '/health'])).toBe(expected);
  });
});

describe('the original request from X-Forwarded-* (read only from trusted proxies)', () => {
  const forwarded = (proto: string | string[] | undefined, host: string | undefined, extra: Record<string, string | string[]> = {}) =>
    forwardedRequest({ 'x-forwarded-proto': proto, 'x-forwarded-host': host, 'x-forwarded-uri': '/', 'x-forwarded-method': 'GET', ...extra }, 'x-forwarded-uri');

  it('reads origin, host, method and URI, the way browsers spell an origin', () => {
    expect(forwarded('https', 'App.Example.com:443', { 'x-forwarded-uri': '/a?b=1', 'x-forwarded-method': 'POST' })).toEqual({
      origin: 'https://app.example.com',
      host: 'app.example.com',
      method: 'POST',
      uri: '/a?b=1',
    });
    expect(forwarded('HTTP', 'app.localhost:4180')).toEqual({ origin: 'http://app.localhost:4180', host: 'app.localhost:4180', method: 'GET', uri: '/' });
    // Asked twice with the same strings: the remembered answer is the same answer.
    expect(forwarded('https', 'App.Example.com:443')).toEqual(forwarded('https', 'App.Example.com:443'));
  });

  it('reads the URI from the configured header only', () => {
    const headers = { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'app.localhost', 'x-forwarded-method': 'GET', 'x-original-uri': '/nginx-style' };
    expect(forwardedRequest(headers, 'x-original-uri')?.uri).toBe('/nginx-style');
    expect(forwardedRequest(headers, 'x-forwarded-uri')).toBeUndefined();
  });

  it.each<[string, string | string[] | undefined, string | undefined, Record<string, string | string[]>]>([
    ['no proto', undefined, 'app.example.com', {}],
    ['no host', 'https', undefined, {}],
    ['a list of protos', 'https, http', 'app.example.com', {}],
    ['a list of hosts', 'https', 'app.example.com, evil.example', {}],
    ['two proto headers', ['https', 'http'], 'app.example.com', {}],
    ['a padded host', 'https', ' app.example.com ', {}],
    ['a host with a non-breaking space', 'https', 'app.example.com\u00a0', {}],
    ['another scheme', 'javascript', 'app.example.com', {}],
    ['userinfo in the host', 'https', 'user@app.example.com', {}],
    ['a path in the host', 'https', 'app.example.com/evil', {}],
    ['a port out of shape', 'https', 'app.example.com:123456', {}],
    ['a URI that is not a path', 'https', 'app.example.com', { 'x-forwarded-uri': 'https://evil.example/' }],
    ['two URI headers, joined by Node', 'https', 'app.example.com', { 'x-forwarded-uri': '/public/x, /admin' }],
    ['two URI headers, as an array', 'https', 'app.example.com', { 'x-forwarded-uri': ['/public/x', '/admin'] }],
    ['a URI with a fragment', 'https', 'app.example.com', { 'x-forwarded-uri': '/public/#/../admin' }],
    ['a URI with a space', 'https', 'app.example.com', { 'x-forwarded-uri': '/public/ x' }],
    ['no method', 'https', 'app.example.com', { 'x-forwarded-method': '' }],
    ['a padded method', 'https', 'app.example.com', { 'x-forwarded-method': ' GET ' }],
    ['a list of methods', 'https', 'app.example.com', { 'x-forwarded-method': 'OPTIONS, GET' }],
  ])('%s is no request at all', (_name, proto, host, extra) => {
    expect(forwarded(proto, host, extra)).toBeUndefined();
    expect(forwarded(proto, host, extra)).toBeUndefined();
  });

  it('keeps a comma inside a URI: it is one path, judged whole', () => {
    expect(forwarded('https', 'app.example.com', { 'x-forwarded-uri': '/static,/../secret.txt' })?.uri).toBe('/static,/../secret.txt');
  });
});

/** ingress-nginx's `auth-url`: X-Original-URL ($scheme://$http_host$request_uri) and X-Original-Method. */
describe('the original request from X-Original-URL (forwardAuth.uriHeader: X-Original-URL)', () => {
  const original = (url: string | string[] | undefined, method: string | string[] | undefined, extra: Record<string, string> = {}) =>
    forwardedRequest({ 'x-original-url': url, 'x-original-method': method, ...extra }, 'x-original-url');

  it('reads origin, host, method and URI from the one URL, the way browsers spell an origin', () => {
    expect(original('https://Wiki.Example.com:443/a/b?c=1', 'POST')).toEqual({ origin: 'https://wiki.example.com', host: 'wiki.example.com', method: 'POST', uri: '/a/b?c=1' });
    expect(original('http://wiki.localhost:8080/', 'GET')).toEqual({ origin: 'http://wiki.localhost:8080', host: 'wiki.localhost:8080', method: 'GET', uri: '/' });
    expect(original('https://wiki.example.com/static,/../secret.txt', 'GET')?.uri).toBe('/static,/../secret.txt');
  });

  // Threat: X-Forwarded-* made up by the client. ingress-nginx sends none of its own in the check (it
  // clears X-Forwarded-Proto) but passes the client's on: in this mode they describe nothing.
  it('never reads X-Forwarded-*', () => {
    expect(original(undefined, 'GET', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'wiki.example.com', 'x-forwarded-uri': '/', 'x-forwarded-method': 'GET' })).toBeUndefined();
    expect(original('https://wiki.example.com/', 'GET', { 'x-forwarded-host': 'evil.example' })?.origin).toBe('https://wiki.example.com');
  });

  // Threat: a URL read differently here and by the proxy or the app — a list, a second header, an
  // authority that is not a plain host, a target that is not origin-form.
  it.each<[string, string | string[] | undefined, string | string[] | undefined]>([
    ['no URL', undefined, 'GET'],
    ['no method', 'https://wiki.example.com/', undefined],
    ['two URL headers, joined by Node', 'https://wiki.example.com/public, https://wiki.example.com/admin', 'GET'],
    ['two URL headers, as an array', ['https://wiki.example.com/public', 'https://wiki.example.com/admin'], 'GET'],
    ['a list of methods', 'https://wiki.example.com/', 'OPTIONS, GET'],
    ['a padded URL', ' https://wiki.example.com/', 'GET'],
    ['no path', 'https://wiki.example.com', 'GET'],
    ['no host (HTTP/1.0 without Host)', 'http:///admin', 'GET'],
    ['another scheme', 'javascript://wiki.example.com/', 'GET'],
    ['a scheme in capitals (nginx writes $scheme in lower case)', 'HTTPS://wiki.example.com/', 'GET'],
    ['userinfo', 'https://user@wiki.example.com/', 'GET'],
    ['a host with a query', 'https://wiki.example.com?x=/admin', 'GET'],
    ['a host followed by an absolute-form target', 'https://wiki.example.comhttp://evil.example/', 'GET'],
    ['a fragment', 'https://wiki.example.com/public/#/../admin', 'GET'],
    ['a space', 'https://wiki.example.com/public/ x', 'GET'],
    ['a line break', 'https://wiki.example.com/public/\nx', 'GET'],
    ['a port out of shape', 'https://wiki.example.com:123456/', 'GET'],
  ])('%s is no request at all', (_name, url, method) => {
    expect(original(url, method)).toBeUndefined();
  });
});
