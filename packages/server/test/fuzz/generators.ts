import fc from 'fast-check';
import { ANSWER_SHAPES, APPS, PROVIDER, SPOOF, T, type AppId, type Credential, type FuzzRequest, type Peer } from './model.js';

/**
 * fast-check arbitraries for hostile requests to every public endpoint. Everything is built from
 * fast-check combinators, so a failing request shrinks to a small one (fewer mutations, fewer headers,
 * the simplest path piece). Values only known at run time are placeholders (model.ts `T`).
 */

const P = T.port;
const pick = <V>(values: readonly V[]) => fc.constantFrom(...values);
const portal = `localhost:${P}`;
const hostOf = (app: AppId) => `${APPS[app].hostname}:${P}`;
const other = (app: AppId): AppId => (app === 'wiki' ? 'vault' : 'wiki');

// ---------------------------------------------------------------- paths

const PRIVATE = ['secret.txt', 'admin', 'private/report', 'api/data', '', 'etc/passwd'];
const PUBLIC_BASES = ['/public', '/public/', '/public/a.txt', '/healthz', '/static', '/health', '/public/x/y'];
const SEPARATORS = ['/', '//', '\\', '%2f', '%2F', '%5c', '%5C', ';', ';x=1/', '%3b', ',', ',/', '/./', '/%2e/', '%00/', '#', '?', '%23', '%3f', '%09', '%20/', '/;/', '%252f'];
const TRAVERSALS = [
  '..', '%2e%2e', '%2E%2E', '.%2e', '%2e.', '%252e%252e', '..;', '..%3b', '.;', '．．', '%ef%bc%8e%ef%bc%8e', '%c0%ae%c0%ae',
  '%e0%80%ae%e0%80%ae', '..%00', '..%c0%af', '..%2f', '..\\', '%u002e%u002e', '\u2024\u2024', '。。', '...', '..%20', '.%00.', '..%09', '%2e%2e%2f', '.',
];
const SUFFIXES = ['', '', '?x=1', '#frag', '?/public/x', '#/../public/x', '%23', ';jsessionid=1', '/', '/.', '?', '#', '%3f/healthz'];
const PRIVATE_FIRST_JOINS = ['?', '#', ';', '%3f', '%23', '?/', '#/', '/..;/', ',', ';/', '%00'];
const KNOWN_APP_PATHS = [
  '/', '/healthz', '/Healthz', '/HEALTHZ', '/healthz.', '/healthz/', '/healthz/.', '/healthz/..', '/healthz%20', '/healthz%00', '/./healthz',
  '//healthz', '/healthz//', '/public', '/public/x', '/PUBLIC/x', '/public%2fx', '/public\\..\\secret.txt', '/public/./x', '/public/../healthz',
  '/secret.txt', '/admin', '/api/data', '/public/%2e%2e/secret.txt', '/static,/../secret.txt', '/healthz,/../x', '/public/x/../../secret.txt',
  '/.gatehouse/start', '/.gatehouse/complete', '/.gatehouse/sign-out', '/.gatehouse/auth', '/.gatehouse/forward-auth', '/%2egatehouse/start',
];
const INSERTS = ['/', '.', '..', '%', '%2e', ';', '#', '?', '\\', '%00', '%0a', '%0d%0a', ' ', '\t', '~', '*', '@', ':', '%25', '%ff', 'é', '\u0130', '\ufeff', ',', '%2f', '//', '../', '%5c', '&'];

interface Mutation {
  at: number;
  kind: 'insert' | 'encode' | 'double' | 'delete' | 'upper';
  text: string;
}
const mutation: fc.Arbitrary<Mutation> = fc.record({ at: fc.nat(), kind: pick(['insert', 'encode', 'double', 'delete', 'upper'] as const), text: pick(INSERTS) });

function applyMutations(value: string, mutations: readonly Mutation[]): string {
  let result = value;
  for (const { at, kind, text } of mutations) {
    const i = result.length === 0 ? 0 : 1 + (at % result.length); // never before the leading "/"
    const char = result.charAt(i);
    switch (kind) {
      case 'insert':
        result = result.slice(0, i) + text + result.slice(i);
        break;
      case 'encode':
        if (char) result = result.slice(0, i) + `%${char.charCodeAt(0).toString(16).padStart(2, '0')}` + result.slice(i + 1);
        break;
      case 'double':
        if (char) result = result.slice(0, i) + `%25${char.charCodeAt(0).toString(16).padStart(2, '0')}` + result.slice(i + 1);
        break;
      case 'delete':
        result = result.slice(0, i) + result.slice(i + 1);
        break;
      case 'upper':
        result = result.slice(0, i) + char.toUpperCase() + result.slice(i + 1);
        break;
    }
  }
  return result;
}

/** Public prefix, then dot segments in every encoding, then a private path: the classic bypass shapes. */
const bypassPath = fc
  .tuple(pick(PUBLIC_BASES), fc.array(fc.tuple(pick(SEPARATORS), pick(TRAVERSALS)), { maxLength: 3 }), pick(SEPARATORS), pick(PRIVATE), pick(SUFFIXES))
  .map(([base, steps, separator, target, suffix]) => `${base}${steps.map(([s, t]) => s + t).join('')}${separator}${target}${suffix}`);

/** A private path that carries a public one after `?`, `#`, `;`: judged on the wrong part, it would pass. */
const privateFirstPath = fc
  .tuple(pick(PRIVATE), pick(PRIVATE_FIRST_JOINS), pick(PUBLIC_BASES))
  .map(([target, join, base]) => `/${target}${join}${base}`);

const basePath = fc.oneof(
  { weight: 4, arbitrary: bypassPath },
  { weight: 2, arbitrary: privateFirstPath },
  { weight: 3, arbitrary: pick(KNOWN_APP_PATHS) },
  { weight: 1, arbitrary: fc.webPath().map((path) => (path.startsWith('/') ? path : `/${path}`)) },
);

/** A path as an attacker writes it on an app host (or in X-Forwarded-Uri). */
const mutations = (maxLength: number) => fc.oneof({ weight: 3, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 2, arbitrary: fc.array(mutation, { minLength: 1, maxLength }) });

export const appPath: fc.Arbitrary<string> = fc
  .tuple(basePath, mutations(3))
  .map(([path, mutations]) => applyMutations(path, mutations));

// ---------------------------------------------------------------- headers

const SPOOFABLE: ReadonlyArray<[string, string]> = [
  ['X-Gatehouse-User', `${SPOOF.word}-user`],
  ['X-Gatehouse-Email', `${SPOOF.word}-admin@example.com`],
  ['X-Gatehouse-Groups', `admins,${SPOOF.word}`],
  ['X-Gatehouse-Name', `${SPOOF.word} admin`],
  ['X-Gatehouse-Assertion', `${SPOOF.word}.jwt.sig`],
  ['X-Original-URL', `/admin/${SPOOF.word}`],
  ['X-Rewrite-URL', `/admin/${SPOOF.word}`],
  ['X-Original-URI', `/admin/${SPOOF.word}`],
  ['X-Forwarded-Uri', `/admin/${SPOOF.word}`],
  ['X-Forwarded-Prefix', `/${SPOOF.word}`],
  ['X-Forwarded-Port', `${SPOOF.word}`],
  ['X-Forwarded-Server', `${SPOOF.word}.example`],
  ['X-Forwarded-Host', `${SPOOF.word}.example`],
  ['X-Forwarded-Proto', `${SPOOF.word}`],
  ['X-Forwarded-For', SPOOF.ip],
  ['X-Real-IP', SPOOF.ip],
  ['X-Client-IP', SPOOF.ip],
  ['True-Client-IP', SPOOF.ip],
  ['Forwarded', `for=${SPOOF.ip};host=${SPOOF.word}.example;proto=https`],
  ['X-Host', `${SPOOF.word}.example`],
  ['X-Forwarded-Scheme', `${SPOOF.word}`],
];
type Spelling = 'as-is' | 'lower' | 'upper' | 'underscores' | 'mixed';
function spell(name: string, spelling: Spelling): string {
  switch (spelling) {
    case 'as-is':
      return name;
    case 'lower':
      return name.toLowerCase();
    case 'upper':
      return name.toUpperCase();
    case 'underscores':
      return name.replace(/-/g, '_');
    case 'mixed':
      return [...name].map((c, i) => (i % 2 ? c.toLowerCase() : c.toUpperCase())).join('');
  }
}
const spoofHeaders: fc.Arbitrary<Array<[string, string]>> = fc.array(
  fc.tuple(pick(SPOOFABLE), pick(['as-is', 'lower', 'upper', 'underscores', 'mixed'] as const)).map(([[name, value], spelling]): [string, string] => [spell(name, spelling), value]),
  { maxLength: 4 },
);

const ACCEPTS = [undefined, 'text/html', 'text/html,application/xhtml+xml', 'application/json', '*/*', 'application/json, text/html;q=0.1'];
const accept = pick(ACCEPTS).map((value): Array<[string, string]> => (value ? [['Accept', value]] : []));

/** Connection headers; never naming x-fuzz-id (the harness's own correlation header). */
const connection = pick([undefined, 'close', 'keep-alive', 'close, X-Gatehouse-Email', 'X-Forwarded-For, X-Real-IP', 'x-gatehouse-user', 'close, cookie', 'upgrade']).map(
  (value): Array<[string, string]> => (value ? [['Connection', value]] : []),
);

const GARBAGE_COOKIE = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
function cookieHeaders(credential: Credential): Array<[string, string]> {
  switch (credential) {
    case 'none':
      return [];
    case 'wiki':
      return [['Cookie', `gatehouse_app=${T.wikiCookie}`]];
    case 'vault':
      return [['Cookie', `gatehouse_app=${T.vaultCookie}`]];
    case 'portal':
      return [['Cookie', `gatehouse_session=${T.portalCookie}`]];
    case 'garbage':
      return [['Cookie', `gatehouse_app=${GARBAGE_COOKIE}; gatehouse_session=${GARBAGE_COOKIE}`]];
    case 'tampered':
      return [['Cookie', `gatehouse_app=${T.wikiCookie}x`]];
    case 'wiki+vault':
      return [['Cookie', `gatehouse_app=${T.vaultCookie}; gatehouse_app=${T.wikiCookie}`]];
  }
}
const appCredential = pick(['none', 'none', 'wiki', 'vault', 'portal', 'garbage', 'tampered', 'wiki+vault'] as const);
const peer = fc.oneof({ weight: 3, arbitrary: fc.constant<Peer>('untrusted') }, { weight: 1, arbitrary: fc.constant<Peer>('trusted') });

const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'get', 'M-SEARCH'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function withBody(method: string, body: string, headers: Array<[string, string]>, chunked: boolean): { headers: Array<[string, string]>; body: string } {
  if (!BODY_METHODS.has(method) && body === '') return { headers, body };
  if (chunked) {
    const encoded = body === '' ? '0\r\n\r\n' : `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    return { headers: [...headers, ['Transfer-Encoding', 'chunked']], body: encoded };
  }
  return { headers: [...headers, ['Content-Length', T.length]], body };
}

const preflight = fc.boolean().map((on): Array<[string, string]> => (on ? [['Origin', `http://evil.example`], ['Access-Control-Request-Method', 'DELETE']] : []));

/**
 * Sec-Fetch-Site as browsers send it (same-origin, none: the only values whose answers may be
 * compressed; cross-site, same-site), absent (an old browser), and as nobody should: other spellings,
 * lists, junk, two lines, a look-alike name with underscores.
 */
const FETCH_SITES = ['same-origin', 'none', 'cross-site', 'same-site', 'Same-Origin', 'SAME-ORIGIN', 'same-origin, cross-site', 'none, same-origin', '', 'same-origin;x=1', '"same-origin"', 'nested-document', 'same-origin\t'];
const fetchSite: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) },
  { weight: 6, arbitrary: pick(['same-origin', 'none']).map((value): Array<[string, string]> => [['Sec-Fetch-Site', value]]) },
  { weight: 3, arbitrary: pick(['cross-site', 'same-site']).map((value): Array<[string, string]> => [['Sec-Fetch-Site', value]]) },
  { weight: 2, arbitrary: fc.tuple(pick(['Sec-Fetch-Site', 'sec-fetch-site', 'SEC-FETCH-SITE', 'Sec_Fetch_Site']), pick(FETCH_SITES)).map(([name, value]): Array<[string, string]> => [[name, value]]) },
  { weight: 1, arbitrary: fc.tuple(pick(FETCH_SITES), pick(FETCH_SITES)).map(([first, second]): Array<[string, string]> => [['Sec-Fetch-Site', first], ['Sec-Fetch-Site', second]]) },
);

const ACCEPT_ENCODINGS = ['gzip, deflate, br', 'gzip, deflate, br, zstd', 'br', 'gzip', 'br;q=0, gzip', '*', 'identity', 'gzip;q=0, br;q=0', 'zstd', 'GZIP', 'br;q=1.5', ''];
const acceptEncoding = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Array<[string, string]>>([]) },
  { weight: 3, arbitrary: pick(ACCEPT_ENCODINGS).map((value): Array<[string, string]> => [['Accept-Encoding', value]]) },
);

/** What the recording upstream answers (upstream.ts): mostly short, often a page worth compressing. */
const answerShape = fc
  .oneof({ weight: 2, arbitrary: fc.constant('small') }, { weight: 3, arbitrary: pick(ANSWER_SHAPES) })
  .map((shape): Array<[string, string]> => (shape === 'small' ? [] : [['X-Fuzz-Answer', shape]]));

// ---------------------------------------------------------------- surfaces

const appHostValue = (app: AppId) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(hostOf(app)) }, { weight: 2, arbitrary: pick([
    `${APPS[app].hostname.toUpperCase()}:${P}`, `${APPS[app].hostname}.:${P}`, APPS[app].hostname, `${hostOf(app)}.`,
    ` ${hostOf(app)}`, `${APPS[app].hostname}:0${P}`, `${hostOf(app)}@${hostOf(other(app))}`, `${hostOf(app)}, ${hostOf(other(app))}`, `${hostOf(app)}/x`,
    `${APPS[app].hostname}%2e:${P}`, portal, `127.0.0.1:${P}`, `[::1]:${P}`, '', `${hostOf(app)}:${P}`, `${APPS[app].hostname}:80`, `${hostOf(app)}\t`,
  ]) });

/** A request to an app host: Gatehouse's reverse proxy. */
const appRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    app: pick(['wiki', 'wiki', 'vault'] as const),
    method: pick(METHODS),
    path: appPath,
    absolute: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    host: fc.option(fc.constant(true), { nil: undefined, freq: 20 }),
    extraHost: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: pick(['same', 'other'] as const) }),
    credential: appCredential,
    peer,
    accept,
    spoof: spoofHeaders,
    connection,
    preflight,
    fetchSite,
    acceptEncoding,
    answerShape,
    upgrade: fc.oneof({ weight: 15, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    body: pick(['', 'x=1', '{"a":1}']),
    chunked: fc.boolean(),
    rd: fc.constant(undefined),
  })
  .chain((r) => appHostValue(r.app).map((host) => ({ ...r, hostValue: host })))
  .map((r): FuzzRequest => {
    const headers: Array<[string, string]> = [];
    if (r.host !== undefined) headers.push(['Host', r.hostValue]);
    if (r.extraHost) headers.push(['Host', r.extraHost === 'same' ? hostOf(r.app) : hostOf(other(r.app))]);
    headers.push(...r.accept, ...cookieHeaders(r.credential), ...r.spoof, ...r.connection, ...r.preflight, ...r.fetchSite, ...r.acceptEncoding, ...r.answerShape);
    if (r.upgrade) headers.push(['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='], ['Sec-WebSocket-Version', '13']);
    const target = r.absolute ? `http://${hostOf(other(r.app))}${r.path}` : r.path;
    const { headers: all, body } = withBody(r.method, r.body, headers, r.chunked);
    return { surface: 'app', peer: r.peer, method: r.method, target, headers: all, body, credential: r.credential, servedApp: r.app };
  });

/**
 * Requests that reach an app with bob's session (mostly the wiki, whose compression is on) asking for
 * answers worth compressing, with every kind of Sec-Fetch-Site and Accept-Encoding: where compression
 * is judged (BREACH). Plain paths, so most get through and the answer is the app's.
 */
const compressionRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    app: pick(['wiki', 'wiki', 'wiki', 'vault'] as const),
    method: pick(['GET', 'GET', 'GET', 'HEAD', 'POST']),
    path: pick(['/', '/page', '/search?q=csrf%3Dabc', '/public/report', '/healthz', '/api/data?format=json', '/reflect/%3Cscript%3E']),
    credential: pick(['wiki', 'wiki', 'wiki', 'wiki+vault', 'vault', 'none'] as const),
    peer,
    accept,
    fetchSite,
    acceptEncoding,
    answerShape: pick(ANSWER_SHAPES).map((shape): Array<[string, string]> => (shape === 'small' ? [] : [['X-Fuzz-Answer', shape]])),
    extra: fc.oneof({ weight: 4, arbitrary: fc.constant<Array<[string, string]>>([]) }, { weight: 1, arbitrary: fc.constantFrom<Array<[string, string]>>([['Range', 'bytes=0-99']], [['Cache-Control', 'no-transform']], [['Origin', 'http://evil.example']], [['Sec-Fetch-Mode', 'no-cors'], ['Sec-Fetch-Dest', 'image']]) }),
  })
  .map((r): FuzzRequest => {
    const headers: Array<[string, string]> = [['Host', hostOf(r.app)], ...r.accept, ...cookieHeaders(r.credential), ...r.fetchSite, ...r.acceptEncoding, ...r.answerShape, ...r.extra];
    const { headers: all, body } = withBody(r.method, r.method === 'POST' ? 'q=1' : '', headers, false);
    return { surface: 'app', peer: r.peer, method: r.method, target: r.path, headers: all, body, credential: r.credential, servedApp: r.app };
  });

const RETURN_TOS = [
  '/.//evil.com/phish', '/..//evil.com', '/%2e%2e//evil.com', `http://localhost:${P}//evil.com`, '//evil.com', '/\\evil.com', '\\\\evil.com', 'https://evil.com/',
  `http://wiki.localhost:${P}/x`, `http://wiki.localhost:${P}.evil.com/`, `http://evil.com@wiki.localhost:${P}/`, `http://wiki.localhost:${P}@evil.com/`, 'javascript:alert(1)',
  ' //evil.com', '\t//evil.com', '/account', `http://wiki.localhost:${P}\\@evil.com`, '///evil.com', '/%09/evil.com', '%2f%2fevil.com', 'http:evil.com', `HTTP://WIKI.LOCALHOST:${P}/`,
  `http://vault.localhost:${P}/secret.txt`, '/\t/evil.com', 'data:text/html,x', `http://localhost:${P}/%2f%2fevil.com`,
];
const returnTo = fc.tuple(pick(RETURN_TOS), fc.boolean()).map(([value, encode]) => (encode ? encodeURIComponent(value) : value));

/** The one-time handshake on app hosts: /.gatehouse/start and /.gatehouse/complete with hostile rd and codes. */
const appHandshakeRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({ app: pick(['wiki', 'vault'] as const), endpoint: pick(['/.gatehouse/start?rd=', '/.gatehouse/complete?code=x&state=', '/.gatehouse/start?rd=', '/.gatehouse/sign-out?rd=']), rd: returnTo, credential: appCredential, peer, accept })
  .map((r): FuzzRequest => ({
    surface: 'app',
    peer: r.peer,
    method: 'GET',
    target: `${r.endpoint}${r.rd}`,
    headers: [['Host', hostOf(r.app)], ...r.accept, ...cookieHeaders(r.credential)],
    body: '',
    credential: r.credential,
    servedApp: r.app,
  }));

type FaHost = 'served' | 'other' | 'served-upper' | 'served-dot' | 'served,other' | 'other,served' | 'served-noport' | 'portal' | 'served-space';
/** Odd spellings of the endpoints: the bare ones (which name no app), and names that are not an app id. */
const FA_ENDPOINTS = ['/.gatehouse/auth', '/.gatehouse/forward-auth', '/.gatehouse/auth?x=1', '/.gatehouse//auth', '/.gatehouse/auth/', '/.gatehouse/AUTH', '/.gatehouse/forward-auth#x', '/.gatehouse/auth/WIKI', '/.gatehouse/auth/wiki/', '/.gatehouse/auth/wiki?x=1', '/.gatehouse/auth/%77iki', '/.gatehouse/forward-auth/wiki,vault'];

/** A forward-auth check as nginx, Traefik or Caddy would ask it, with every X-Forwarded-* mutated. */
const forwardAuthRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    served: pick(['wiki', 'vault'] as const),
    // The endpoint names the app the asking proxy block serves (as the shipped configs do), or is odd.
    endpoint: fc.oneof({ weight: 6, arbitrary: pick(['@auth', '@forward-auth']) }, { weight: 1, arbitrary: pick(FA_ENDPOINTS) }),
    method: fc.oneof({ weight: 8, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: pick(['HEAD', 'POST', 'OPTIONS']) }),
    host: pick(['portal', 'portal', 'served', 'other'] as const),
    proto: fc.oneof({ weight: 5, arbitrary: fc.constant(['http']) }, { weight: 1, arbitrary: fc.array(pick(['http', 'HTTP', 'https', 'http,https', 'https, http', '', 'ftp', ' http']), { maxLength: 2 }) }),
    forwardedHost: fc.oneof(
      { weight: 4, arbitrary: fc.constant<FaHost[]>(['served']) },
      { weight: 1, arbitrary: fc.constant<FaHost[]>(['other']) },
      { weight: 2, arbitrary: fc.array(pick(['served', 'other', 'served-upper', 'served-dot', 'served,other', 'other,served', 'served-noport', 'portal', 'served-space'] as const), { maxLength: 2 }) },
    ),
    uris: fc.oneof(
      { weight: 4, arbitrary: appPath.map((path): Array<[string, string]> => [['X-Forwarded-Uri', path]]) },
      { weight: 1, arbitrary: appPath.map((path): Array<[string, string]> => [['X-Original-URI', path]]) },
      { weight: 2, arbitrary: fc.array(fc.tuple(pick(['X-Forwarded-Uri', 'X-Original-URI', 'x_forwarded_uri', 'X-Original-URL']), appPath), { maxLength: 3 }) },
    ),
    uriJoin: pick(['', ',', ', ', ',/../', '']),
    forwardedMethod: fc.option(pick(['GET', 'POST', 'OPTIONS', 'get', 'GET,POST', 'HEAD', ' GET']), { nil: undefined }),
    credential: fc.oneof({ weight: 2, arbitrary: fc.constant<Credential>('none') }, { weight: 3, arbitrary: appCredential }),
    peer: fc.oneof({ weight: 9, arbitrary: fc.constant<Peer>('trusted') }, { weight: 1, arbitrary: fc.constant<Peer>('untrusted') }),
    accept,
    preflight,
    spoof: spoofHeaders,
  })
  .map((r): FuzzRequest => {
    const o = other(r.served);
    const hostValue = { portal, served: hostOf(r.served), other: hostOf(o) }[r.host];
    const fh = {
      served: hostOf(r.served),
      other: hostOf(o),
      'served-upper': hostOf(r.served).toUpperCase(),
      'served-dot': `${APPS[r.served].hostname}.:${P}`,
      'served,other': `${hostOf(r.served)},${hostOf(o)}`,
      'other,served': `${hostOf(o)}, ${hostOf(r.served)}`,
      'served-noport': APPS[r.served].hostname,
      portal,
      'served-space': ` ${hostOf(r.served)} `,
    };
    const headers: Array<[string, string]> = [['Host', hostValue]];
    for (const proto of r.proto) headers.push(['X-Forwarded-Proto', proto]);
    for (const host of r.forwardedHost) headers.push(['X-Forwarded-Host', fh[host]]);
    // Two URIs in one header value, joined as a proxy might (commas) or as an attacker writes them.
    if (r.uriJoin !== '' && r.uris.length >= 2) headers.push([r.uris[0]![0], `${r.uris[0]![1]}${r.uriJoin}${r.uris[1]![1]}`]);
    else for (const [name, uri] of r.uris) headers.push([name, uri]);
    if (r.forwardedMethod !== undefined) headers.push(['X-Forwarded-Method', r.forwardedMethod]);
    headers.push(...r.accept, ...cookieHeaders(r.credential), ...r.preflight, ...r.spoof);
    const target = r.endpoint.startsWith('@') ? `/.gatehouse/${r.endpoint.slice(1)}/${r.served}` : r.endpoint;
    return { surface: 'forward-auth', peer: r.peer, method: r.method, target, headers, body: '', credential: r.credential, servedApp: r.served };
  });

const PORTAL_PATHS = [
  '/', '/sign-in', '/account', '/admin', '/admin/users', '/signed-out', '/api/session', '/api/csrf', '/api/providers', '/api/apps', '/api/me/sessions',
  '/api/me/identities', '/api/me/activity', '/api/admin/apps', '/api/admin/users', '/api/admin/providers', '/api/admin/audit', '/api/admin/sign-in-settings',
  '/api/docs', '/api/docs/json', '/.gatehouse/sign-in/dev', '/.gatehouse/sign-in/nope', '/.gatehouse/sign-in/%2e%2e', '/.gatehouse/callback/dev', '/.gatehouse/sign-out',
  '/.gatehouse/link/dev', '/.gatehouse/app-authorize', '/.gatehouse/start', '/.gatehouse/complete', '/.gatehouse/jwks.json', '/healthz', '/readyz', '/api/nope',
  '/.gatehouse/backchannel-logout/dev', '/favicon.ico', '/assets/x.js', '/api/admin/../session', '/api//admin/apps', '/API/admin/apps', '/api/admin%2fapps',
  '/api/admin/apps/', '/api/admin/apps;x', '/api/admin/apps?x=1', '/api/admin/apps#x', '/%61pi/admin/apps', '/api/me/sessions/../../admin/apps',
];
const portalPath = fc
  .tuple(pick(PORTAL_PATHS), fc.option(returnTo, { nil: undefined, freq: 3 }), fc.array(mutation, { maxLength: 2 }))
  .map(([path, rd, mutations]) => applyMutations(rd === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}rd=${rd}`, mutations));

const portalHost = fc.oneof({ weight: 5, arbitrary: fc.constant(portal) }, { weight: 1, arbitrary: pick([`LOCALHOST:${P}`, `127.0.0.1:${P}`, 'evil.example', `localhost:${P}.`, `localhost:${P}@evil.example`]) });

/** Portal pages, the API and Gatehouse's own endpoints, read (GET/HEAD/OPTIONS). */
const portalRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({ method: pick(['GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'TRACE']), path: portalPath, host: portalHost, credential: pick(['none', 'portal', 'portal', 'garbage', 'wiki'] as const), peer, accept, spoof: spoofHeaders })
  .map((r): FuzzRequest => ({
    surface: 'portal',
    peer: r.peer,
    method: r.method,
    target: r.path,
    headers: [['Host', r.host], ...r.accept, ...cookieHeaders(r.credential), ...r.spoof],
    body: '',
    credential: r.credential,
  }));

const STATE_PATHS = [
  '/api/me/sessions/revoke-others', '/api/me/sessions/abc', '/api/me/identities/abc', '/.gatehouse/sign-out', '/.gatehouse/link/dev', '/.gatehouse/test-sign-in/dev',
  '/api/admin/apps', '/api/admin/apps/wiki', '/api/admin/policy-test', '/api/admin/users', '/api/csrf', '/api/session', '/api/admin/providers', '/api/admin/sign-in-settings',
  '/api/me/sessions/revoke-others/', '/api/me/sessions/revoke-others?x', '/API/me/sessions/revoke-others', '/api/me/sessions/%2e%2e/revoke-others',
];
const ORIGINS = [undefined, 'exact', 'null', 'http://evil.example', 'exact/', 'wiki', `http://localhost:${P}.evil.example`, 'HTTP://LOCALHOST:PORT', 'exact, http://evil.example'] as const;

/** State-changing requests at the portal, with the CSRF token and Origin each missing, wrong or right — never both right. */
const portalStateRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.oneof({ weight: 4, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: pick(['PUT', 'PATCH', 'DELETE']) }),
    path: fc.tuple(pick(STATE_PATHS), mutations(1)).map(([path, applied]) => applyMutations(path, applied)),
    token: pick(['none', 'valid', 'garbage', 'tampered', 'form'] as const),
    origin: pick(ORIGINS),
    referer: fc.option(pick([`http://localhost:${P}/account`, 'http://evil.example/']), { nil: undefined }),
    credential: pick(['portal', 'portal', 'portal', 'none', 'garbage'] as const),
    contentType: pick(['application/json', 'application/x-www-form-urlencoded', 'text/plain', undefined]),
    host: portalHost,
    peer,
  })
  .map((r): FuzzRequest => {
    const validToken = r.token === 'valid' || r.token === 'form';
    // Never a complete, valid CSRF pair: the harness does not want to change the state it relies on.
    const origin = validToken && (r.origin === 'exact' || r.origin === 'HTTP://LOCALHOST:PORT') ? 'http://evil.example' : r.origin;
    const headers: Array<[string, string]> = [['Host', r.host], ...cookieHeaders(r.credential)];
    if (origin !== undefined) {
      const value = { exact: `http://localhost:${P}`, 'exact/': `http://localhost:${P}/`, wiki: `http://${hostOf('wiki')}`, 'HTTP://LOCALHOST:PORT': `HTTP://LOCALHOST:${P}`, 'exact, http://evil.example': `http://localhost:${P}, http://evil.example` }[origin as string] ?? origin;
      headers.push(['Origin', value]);
    }
    if (r.referer) headers.push(['Referer', r.referer]);
    if (r.token === 'valid') headers.push(['X-CSRF-Token', T.csrf]);
    if (r.token === 'garbage') headers.push(['X-CSRF-Token', 'AAAA.BBBB']);
    if (r.token === 'tampered') headers.push(['X-CSRF-Token', `${T.csrf}A`]);
    if (r.contentType) headers.push(['Content-Type', r.contentType]);
    const body = r.token === 'form' ? `csrf_token=${T.csrf}` : r.contentType === 'application/json' ? '{}' : '';
    const { headers: all, body: payload } = withBody(r.method, body, headers, false);
    return { surface: 'portal-state', peer: r.peer, method: r.method, target: r.path, headers: all, body: payload, credential: r.credential, csrfComplete: false };
  });

const b64 = (value: string) => Buffer.from(value).toString('base64url');
const JWT_HEADERS = ['{"alg":"none"}', '{"alg":"HS256"}', '{"alg":"RS256","kid":"x"}', '{"alg":"RS256"}', '{"alg":"ES256","kid":"../../etc"}', '{"alg":"none","typ":"logout+jwt"}', 'not json', '{"alg":"HS256","typ":"logout+jwt"}'];
const JWT_PAYLOADS = [
  `{"iss":"${T.idpIssuer}","aud":"gatehouse","sub":"${T.bobSub}","iat":1700000000,"jti":"j1","events":{"http://schemas.openid.net/event/backchannel-logout":{}}}`,
  `{"iss":"${T.idpIssuer}","aud":"gatehouse","sub":"${T.bobSub}","iat":9999999999,"exp":9999999999,"jti":"j2","events":{"http://schemas.openid.net/event/backchannel-logout":{}}}`,
  `{"iss":"${T.idpIssuer}","aud":["gatehouse"],"sid":"x","events":{"http://schemas.openid.net/event/backchannel-logout":{}},"nonce":"n"}`,
  '{}',
  '[]',
  'null',
  `{"iss":"https://evil.example","aud":"gatehouse","sub":"${T.bobSub}"}`,
];
/** Back-channel logout with garbage and forged logout tokens (no valid signature is ever produced). */
const backchannelRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    provider: pick([PROVIDER, PROVIDER, PROVIDER, 'nope', '%2e%2e', 'DEV', `${PROVIDER}%00`]),
    token: fc.oneof(
      fc.tuple(pick(JWT_HEADERS), pick(JWT_PAYLOADS), pick(['', 'c2ln', 'AAAA', '.', 'x'.repeat(400)])).map(([h, p, s]) => `jwt:${b64(h)}.${p}.${s}`),
      fc.string({ maxLength: 60 }),
      pick(['', 'a.b.c', '..', '....', 'x'.repeat(20_000), '%00', 'eyJ']),
    ),
    contentType: pick(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', undefined]),
    field: pick(['logout_token', 'logout_token', 'logout_token[]', 'LOGOUT_TOKEN']),
    method: pick(['POST', 'POST', 'POST', 'GET', 'PUT']),
    credential: pick(['none', 'portal'] as const),
    peer,
  })
  .map((r): FuzzRequest => {
    // The token is put in when rendered ("jwt:" tokens get their placeholders filled and are encoded then).
    const encoding = r.contentType === 'application/json' ? 'json' : 'form';
    const body = encoding === 'json' ? `{"${r.field}":"${T.logoutToken}"}` : `${r.field}=${T.logoutToken}`;
    const headers: Array<[string, string]> = [['Host', portal], ...cookieHeaders(r.credential)];
    if (r.contentType) headers.push(['Content-Type', r.contentType]);
    const { headers: all, body: payload } = withBody(r.method === 'GET' ? 'POST' : r.method, body, headers, false);
    return { surface: 'backchannel', peer: r.peer, method: r.method, target: `/.gatehouse/backchannel-logout/${r.provider}`, headers: all, body: payload, credential: r.credential, logoutToken: { value: r.token, encoding } };
  });

/** Sign-in start and callback with garbage state, codes, issuers, errors. */
const callbackRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    endpoint: pick(['/.gatehouse/callback/dev', '/.gatehouse/callback/nope', '/.gatehouse/sign-in/dev', '/.gatehouse/link/dev', '/.gatehouse/callback/dev/', '/.gatehouse/callback/%64ev']),
    params: fc.array(
      fc.tuple(pick(['code', 'state', 'iss', 'error', 'error_description', 'rd', 'session_state', 'response']), fc.oneof(fc.string({ maxLength: 30 }), pick([`${T.idpIssuer}`, 'https://evil.example', '', '<script>', '%00', '//evil.com']))),
      { maxLength: 5 },
    ),
    method: pick(['GET', 'GET', 'POST']),
    signinCookie: pick([undefined, 'garbage', 'empty']),
    credential: pick(['none', 'portal', 'garbage'] as const),
    peer,
    accept,
  })
  .map((r): FuzzRequest => {
    const query = r.params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    const headers: Array<[string, string]> = [['Host', portal], ...r.accept, ...cookieHeaders(r.credential)];
    if (r.signinCookie) headers.push(['Cookie', `gatehouse_signin=${r.signinCookie === 'empty' ? '' : 'AAAA.BBBB'}`]);
    if (r.method === 'POST') {
      const { headers: all, body } = withBody('POST', query, [...headers, ['Content-Type', 'application/x-www-form-urlencoded']], false);
      return { surface: 'callback', peer: r.peer, method: 'POST', target: r.endpoint, headers: all, body, credential: r.credential };
    }
    return { surface: 'callback', peer: r.peer, method: 'GET', target: query ? `${r.endpoint}?${query}` : r.endpoint, headers, body: '', credential: r.credential };
  });

// ---------------------------------------------------------------- raw (malformed on the wire)

const RAW_TEMPLATES = [
  // CL.TE / TE.CL request smuggling: a second request hidden in the body.
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nContent-Length: 45\r\nTransfer-Encoding: chunked\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n0\r\n\r\nGET /secret.txt HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\n\r\n`,
  `POST /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n0\r\n\r\nGET /secret.txt HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\n\r\n`,
  `POST /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nTransfer-Encoding: xchunked\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n0\r\n\r\n`,
  `POST /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nContent-Length: 0\r\nContent-Length: 44\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\nGET /secret.txt HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\n\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\nX-Gatehouse-Email: a\r\n ${SPOOF.word}@example.com\r\n\r\n`,
  `GET /healthz HTTP/1.1\nHost: ${hostOf('wiki')}\nX-Fuzz-Id: ${T.fuzzId}\nX-Original-URL: /admin/${SPOOF.word}\n\n`,
  `GET /secret.txt HTTP/1.1\r\nHost : ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /secret.txt HTTP/1.0\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /secret.txt\r\n\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`,
  `CONNECT ${hostOf('vault')} HTTP/1.1\r\nHost: ${hostOf('vault')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET * HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `OPTIONS * HTTP/1.1\r\nHost: ${hostOf('vault')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET http://${hostOf('vault')}/secret.txt HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `POST /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Length: 3\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\nabc`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\nX-Gatehouse-Email: \u0000${SPOOF.word}\r\n\r\n`,
  `G@T /secret.txt HTTP/1.1\r\nHost: ${hostOf('vault')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET  /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /healthz HTTP/2.0\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nHost: ${hostOf('vault')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /healthz#/../secret.txt HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /public/\u00ff/../secret.txt HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /public/x HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nX-Fuzz-Id: ${T.fuzzId}\r\nX_Gatehouse_Email: ${SPOOF.word}@example.com\r\nX-Gatehouse-Email : ${SPOOF.word}@example.com\r\n\r\n`,
  `GET /.gatehouse/auth/wiki HTTP/1.1\r\nHost: ${portal}\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: ${hostOf('wiki')}\r\nX-Forwarded-Uri: /healthz\r\nX-Forwarded-Uri: /../secret.txt\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nTransfer-Encoding: chunked\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\nfffffffffffffffff\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nContent-Length: -1\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
  `GET /healthz HTTP/1.1\r\nHost: ${hostOf('wiki')}\r\nContent-Length: 1e3\r\nX-Fuzz-Id: ${T.fuzzId}\r\n\r\n`,
];
const RAW_INSERTS = ['\r', '\n', '\r\n', '\u0000', ' ', '\t', ':', '\r\n\r\n', '\u00ff', '%', '/..', '\r\n ', 'Transfer-Encoding: chunked\r\n', 'Host: vault.localhost\r\n'];

/** Bytes the HTTP parser must judge: smuggling shapes, bad framing, bad request lines, then random damage. */
const rawRequest: fc.Arbitrary<FuzzRequest> = fc
  .tuple(pick(RAW_TEMPLATES), fc.array(fc.tuple(fc.nat(), pick(RAW_INSERTS), fc.boolean()), { maxLength: 3 }), pick(['trusted', 'untrusted'] as const))
  .map(([template, damage, from]): FuzzRequest => {
    let raw = template;
    for (const [at, text, replace] of damage) {
      const i = at % (raw.length + 1);
      raw = raw.slice(0, i) + text + raw.slice(replace ? i + 1 : i);
    }
    // Method and target as the parser reads the request line: up to the first whitespace, CR and LF included.
    const [method = '', target = ''] = raw.split(/[ \t\r\n]+/);
    return { surface: 'raw', peer: from, method, target, headers: [], body: '', raw, credential: 'none' };
  });

/** Every public endpoint, weighted toward the bypass-prone surfaces. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 10, arbitrary: appRequest },
  { weight: 5, arbitrary: compressionRequest },
  { weight: 2, arbitrary: appHandshakeRequest },
  { weight: 8, arbitrary: forwardAuthRequest },
  { weight: 3, arbitrary: portalRequest },
  { weight: 2, arbitrary: portalStateRequest },
  { weight: 1, arbitrary: backchannelRequest },
  { weight: 1, arbitrary: callbackRequest },
  { weight: 2, arbitrary: rawRequest },
);
