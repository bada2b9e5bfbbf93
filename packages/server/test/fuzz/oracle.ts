import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { header, type Answer } from './client.js';
import { APPS, canonicalHeaderName, COMPRESSIBLE_FETCH_SITES, IDENTITY_HEADER_NAMES, REWRITE_HEADERS, SPOOF, USER, userMayOpen, type AppId, type Credential, type FuzzRequest } from './model.js';
import { publicForEveryReading } from './resolve.js';
import type { Arrival } from './upstream.js';

/**
 * The fuzz oracle. It judges what Gatehouse answered and what reached the apps with its own model
 * (model.ts, resolve.ts) and the documented error catalogue (docs/errors.md), never with Gatehouse's code:
 *   (1) no 5xx (the upstreams are up) and no request left without an answer;
 *   (3) no allow where a deny was due: nothing reaches an upstream without a session for a path that is
 *       not public as the upstream resolves it, no identity reaches an app the user may not open, and
 *       forward-auth never says 2xx for such a request;
 *   (4) no identity header (any spelling) and, from an untrusted peer, no forwarding or rewrite header
 *       from the client reaches an upstream;
 *   (5) every error answer is the catalogue's problem+json or HTML page with a reference;
 *   (6) no proxied answer carries a Content-Encoding the app did not set itself unless the app has
 *       compression on and the request's Sec-Fetch-Site is same-origin or none (BREACH);
 *   (7) nothing meant for admins reaches a stranger or a person who is not one (bob never is): no
 *       readiness check beyond the status on `/readyz`, no app named by the sign-in page's
 *       `/api/providers` without a portal session, no rule text, refusal reason or `why` in a person's
 *       own activity (`/api/me/activity`);
 *   and: no redirect off the known origins, no state change without CSRF, no admin API for a non-admin,
 *   no forged logout token accepted, no session from a garbage callback.
 * (2), the process surviving, is checked per batch by the runner.
 */

export type Rule =
  | 'server-error'
  | 'no-answer'
  | 'allow-unauthenticated'
  | 'allow-not-permitted'
  | 'allow-without-session'
  | 'forward-auth-untrusted-peer'
  | 'identity-header-passed'
  | 'rewrite-header-passed'
  | 'error-format'
  | 'open-redirect'
  | 'csrf-bypass'
  | 'admin-for-non-admin'
  | 'logout-token-accepted'
  | 'session-from-garbage'
  | 'compression-not-due'
  | 'details-for-non-admin'
  | 'crash'
  | 'health'
  | 'session-lost';

export interface Violation {
  rule: Rule;
  /** A short, stable description of the kind (groups repeats of one bug). */
  kind: string;
  detail: string;
}

const docs = fileURLToPath(new URL('../../../../docs/errors.md', import.meta.url));

/** code → status, read from the catalogue's table in docs/errors.md. */
export function documentedCatalogue(): Map<string, number> {
  const table = new Map<string, number>();
  for (const match of readFileSync(docs, 'utf8').matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) table.set(match[1]!, Number(match[2]));
  if (table.size < 10) throw new Error('could not read the error catalogue from docs/errors.md');
  return table;
}
const CATALOGUE = documentedCatalogue();

const pathOf = (target: string) => target.split('?')[0]!.split('#')[0]!;
/** The forward-auth endpoints, bare or naming an app ("/.gatehouse/auth/wiki"). */
const isForwardAuth = (path: string) => /^\/\.gatehouse\/(forward-)?auth(\/|$)/.test(path);
const SPOOF_MARKERS = [SPOOF.word, SPOOF.ip];
const hasMarker = (value: string) => SPOOF_MARKERS.some((marker) => value.toLowerCase().includes(marker));

/** Which app's cookies a request carried. */
function carriesSessionFor(credential: Credential, app: AppId): boolean {
  return credential === app || credential === 'wiki+vault';
}

function requestHeaders(request: FuzzRequest, name: string): string[] {
  return request.headers.filter(([n]) => n.toLowerCase() === name).map(([, value]) => value);
}

/** An error answer in the catalogue's format: problem+json or the HTML page, a known code, its status, a reference. */
function errorFormat(request: FuzzRequest, answer: Answer): string | undefined {
  const type = header(answer, 'content-type') ?? '';
  const path = pathOf(request.target);
  // Documented exceptions: forward-auth's bare 401/403 for proxies, and Back-Channel Logout's §2.8 answer.
  if (isForwardAuth(path) && (answer.status === 401 || answer.status === 403) && answer.body === '') return undefined;
  if (path.startsWith('/.gatehouse/backchannel-logout/') && answer.status === 400 && type.startsWith('application/json') && /"error":"invalid_request"/.test(answer.body)) return undefined;
  if (request.method.toUpperCase() === 'HEAD') return /^(application\/problem\+json|text\/html)/.test(type) ? undefined : `HEAD ${answer.status} with content-type "${type}"`;
  if (type.startsWith('application/problem+json')) {
    let problem: { type?: unknown; code?: unknown; status?: unknown; reference?: unknown; title?: unknown; detail?: unknown };
    try {
      problem = JSON.parse(answer.body) as typeof problem;
    } catch {
      return `problem+json that does not parse: ${answer.body.slice(0, 80)}`;
    }
    const code = String(problem.code);
    if (!CATALOGUE.has(code)) return `unknown code "${code}"`;
    if (problem.type !== `urn:gatehouse:error:${code}`) return `type ${String(problem.type)} for code ${code}`;
    if (problem.status !== answer.status || CATALOGUE.get(code) !== answer.status) return `code ${code} with status ${answer.status} (catalogue: ${CATALOGUE.get(code)})`;
    if (typeof problem.reference !== 'string' || !/^[A-Za-z0-9_-]{6,}$/.test(problem.reference)) return `no reference in ${answer.body.slice(0, 80)}`;
    if (typeof problem.title !== 'string' || typeof problem.detail !== 'string') return 'no title or detail';
    return undefined;
  }
  if (type.startsWith('text/html')) {
    const match = /Error <code>([a-z_]+)<\/code> · Reference <code>([A-Za-z0-9_-]{6,})<\/code>/.exec(answer.body);
    if (!match) return `HTML ${answer.status} without the catalogue's code and reference: ${answer.body.slice(0, 80)}`;
    if (CATALOGUE.get(match[1]!) !== answer.status) return `page for ${match[1]} with status ${answer.status}`;
    return undefined;
  }
  return `${answer.status} as "${type}": ${answer.body.slice(0, 80)}`;
}

/** Where a redirect may go: the portal, the apps, the IdP (or relative on the same origin). */
function redirectProblem(location: string, allowed: ReadonlySet<string>): string | undefined {
  const base = 'http://same-origin.invalid';
  if (!URL.canParse(location, base)) return `unparseable Location ${location}`;
  const target = new URL(location, base);
  if (target.origin === base || allowed.has(target.origin)) return undefined;
  return `Location ${location} leaves for ${target.origin}`;
}

export interface JudgeContext {
  allowedOrigins: ReadonlySet<string>;
}

/** Everything wrong with one exchange and what it made reach the apps. */
export function judge(request: FuzzRequest, answer: Answer, arrivals: readonly Arrival[], context: JudgeContext): Violation[] {
  const found: Violation[] = [];
  const add = (rule: Rule, kind: string, detail: string) => found.push({ rule, kind, detail });
  const path = pathOf(request.target);

  if (answer.status >= 500) add('server-error', `${answer.status}`, `${answer.status}: ${answer.body.slice(0, 200)}`);
  if (answer.status === -1) add('no-answer', 'timeout', 'no answer and no close within the time limit');
  if (answer.status >= 400) {
    const problem = errorFormat(request, answer);
    if (problem) add('error-format', problem.replace(/[0-9a-f]{12}|\d{3,}|:.*$/g, '…'), problem);
  }
  if (answer.status >= 300 && answer.status < 400) {
    const location = header(answer, 'location');
    const problem = location === undefined ? undefined : redirectProblem(location, context.allowedOrigins);
    if (problem) add('open-redirect', `${request.surface} ${path}`, problem);
  }
  const ok = answer.status >= 200 && answer.status < 300;

  for (const arrival of arrivals) for (const violation of judgeArrival(arrival, request)) found.push(violation);
  const compression = addedEncoding(answer, arrivals);
  if (compression && request.surface === 'app') {
    const site = fetchSiteOf(request);
    const apps = [...new Set(arrivals.map((arrival) => arrival.app))];
    if (!site.compressible) add('compression-not-due', `Sec-Fetch-Site ${site.shape}`, `${compression} answer to ${request.method} ${request.target} with ${site.described}`);
    if (apps.some((app) => !APPS[app].compress)) add('compression-not-due', 'app without compress', `${compression} answer from ${apps.join('+')}, whose compression is off`);
  }

  const disclosed = adminDetails(request, answer, path);
  if (disclosed) add('details-for-non-admin', `${request.surface} ${path}`, disclosed);

  switch (request.surface) {
    case 'forward-auth':
      if (ok && isForwardAuth(path)) found.push(...judgeForwardAuth(request, answer));
      break;
    case 'portal':
    case 'portal-state': {
      const admin = /^\/api\/admin(\/|$)/i.test(path) || /\/admin\//i.test(decodeURIComponentSafe(path));
      if (ok && admin && /^\/api\//i.test(path)) add('admin-for-non-admin', `${request.method} ${path}`, `${answer.status} for ${request.method} ${request.target} as ${request.credential}`);
      const stateChanging = !['GET', 'HEAD', 'OPTIONS', 'TRACE'].includes(request.method.toUpperCase());
      if (request.surface === 'portal-state' && stateChanging && !request.csrfComplete && request.credential === 'portal' && answer.status >= 200 && answer.status < 400) {
        add('csrf-bypass', `${request.method} ${path}`, `${answer.status} for ${request.method} ${request.target} without a complete CSRF pair`);
      }
      break;
    }
    case 'backchannel':
      if (ok) add('logout-token-accepted', path, `${answer.status} for a forged logout token`);
      break;
    case 'callback':
      for (const line of answer.headers.get('set-cookie') ?? []) {
        if (/^gatehouse_session=[^;]+/.test(line)) add('session-from-garbage', path, `a session cookie for a callback with no real sign-in: ${line.slice(0, 60)}`);
      }
      break;
    default:
      break;
  }
  return found;
}

/** What an answer gives away that is meant for admins (rule 7), or undefined. */
function adminDetails(request: FuzzRequest, answer: Answer, path: string): string | undefined {
  if (!(header(answer, 'content-type') ?? '').startsWith('application/json')) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  if (path === '/readyz' && Object.keys(fields).some((key) => key !== 'status')) return `/readyz told ${request.credential} ${Object.keys(fields).join(', ')}`;
  if (path === '/api/providers' && !request.credential.includes('portal')) {
    const returnTo = fields.returnTo as { appName?: unknown; host?: unknown } | undefined;
    if (returnTo && ((returnTo.appName ?? null) !== null || (returnTo.host ?? null) !== null)) return `/api/providers named ${String(returnTo.appName)} at ${String(returnTo.host)} to a caller without a portal session`;
  }
  if (path === '/api/me/activity' && answer.status === 200) {
    const text = answer.body;
    // The rule that decided ("denied by deny[0]: emails …"), a refusal's reason, the admins' sentence.
    if (/"(why|refusal|rule)"\s*:|\b(allow|deny)\[\d+\]/.test(text)) return `a person's activity carried admin details: ${text.slice(0, 120)}`;
  }
  return undefined;
}

/**
 * The Content-Encoding Gatehouse added to a proxied answer: one the answer carries (not `identity`)
 * that no upstream answered this request with. Undefined when nothing reached an app (Gatehouse's own
 * pages and the portal's files are not proxied answers) or the app encoded it itself.
 */
export function addedEncoding(answer: Answer, arrivals: readonly Arrival[]): string | undefined {
  const encoding = header(answer, 'content-encoding')?.toLowerCase();
  if (!encoding || encoding === 'identity' || arrivals.length === 0) return undefined;
  return arrivals.some((arrival) => arrival.answeredEncoding?.toLowerCase() === encoding) ? undefined : encoding;
}

/** The request's Sec-Fetch-Site as the server reads it: exactly one line, its value without surrounding spaces and tabs. */
function fetchSiteOf(request: FuzzRequest): { compressible: boolean; shape: string; described: string } {
  const values = request.headers.filter(([name]) => name.toLowerCase() === 'sec-fetch-site').map(([, value]) => value.replace(/^[ \t]+|[ \t]+$/g, ''));
  const compressible = values.length === 1 && COMPRESSIBLE_FETCH_SITES.includes(values[0]!);
  const shape = values.length === 0 ? 'absent' : values.length > 1 ? 'twice' : ['cross-site', 'same-site', 'same-origin', 'none'].includes(values[0]!) ? values[0]! : 'other';
  return { compressible, shape, described: values.length === 0 ? 'no Sec-Fetch-Site' : `Sec-Fetch-Site ${values.map((value) => JSON.stringify(value)).join(', ')}` };
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** A request that reached an upstream: was it due? */
export function judgeArrival(arrival: Arrival, request: FuzzRequest | undefined): Violation[] {
  const found: Violation[] = [];
  const add = (rule: Rule, kind: string, detail: string) => found.push({ rule, kind, detail });
  const app = APPS[arrival.app];
  const values = (name: string) => arrival.rawHeaders.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  const email = values('x-gatehouse-email').join(',');
  const where = `${arrival.method} ${arrival.url} reached ${app.id}`;

  if (email !== '') {
    if (email !== USER.login) add('identity-header-passed', 'identity not from Gatehouse', `${where} as "${email}"`);
    if (!userMayOpen(app.id)) add('allow-not-permitted', `${app.id}: ${request?.surface ?? 'untagged'}`, `${where} with ${USER.login}'s identity, whom the policy refuses`);
    else if (request && !carriesSessionFor(request.credential, app.id)) add('allow-without-session', `${app.id}: ${request.credential}`, `${where} with an identity, but the request carried ${request.credential}`);
  } else {
    const preflight = app.corsPreflight && arrival.method === 'OPTIONS' && values('origin').length > 0 && values('access-control-request-method').length > 0;
    const judged = publicForEveryReading(arrival.url, app.publicPaths);
    if (!preflight && !judged.public) add('allow-unauthenticated', `${app.id}: ${shape(arrival.url)}`, `${where} without an identity; an app reads the path as ${JSON.stringify(judged.privateReading)}, not public`);
  }

  for (const [name, value] of arrival.rawHeaders) {
    const canonical = canonicalHeaderName(name);
    if (canonical.startsWith('x-gatehouse-')) {
      if (!IDENTITY_HEADER_NAMES.includes(name.toLowerCase())) add('identity-header-passed', `spelling ${shapeName(name)}`, `${where} with the client's "${name}: ${value}"`);
      else if (hasMarker(value)) add('identity-header-passed', `value of ${name.toLowerCase()}`, `${where} with the client's "${name}: ${value}"`);
    }
    if (request?.peer === 'untrusted' && REWRITE_HEADERS.has(canonical) && hasMarker(value)) {
      add('rewrite-header-passed', `forwarding or rewrite header${name.includes('_') ? ' (underscores)' : ''}`, `${where} from an untrusted peer with the client's "${name}: ${value}"`);
    }
  }
  return found;
}

/** A forward-auth 2xx: was it due for the app the asking proxy serves? */
function judgeForwardAuth(request: FuzzRequest, answer: Answer): Violation[] {
  const found: Violation[] = [];
  const served = APPS[request.servedApp!];
  const add = (rule: Rule, kind: string, detail: string) => found.push({ rule, kind, detail });
  const summary = request.headers.filter(([n]) => /^x-(forwarded|original)-/i.test(n)).map(([n, v]) => `${n}: ${v}`).join(' | ');
  if (request.peer === 'untrusted') add('forward-auth-untrusted-peer', 'untrusted peer', `${answer.status} for ${summary}`);
  const email = header(answer, 'x-gatehouse-email') ?? '';
  if (email !== '') {
    if (email !== USER.login) add('identity-header-passed', 'forward-auth identity not from Gatehouse', `${answer.status} as "${email}"`);
    if (!userMayOpen(served.id)) add('allow-not-permitted', `forward-auth for ${served.id}: X-Forwarded-Host ${shapeHost(request) === 'served app' ? 'of the served app' : 'names another app'}`, `${answer.status} with ${email}'s identity for the ${served.id} app's proxy: ${summary}`);
    return found;
  }
  const uris = [...requestHeaders(request, 'x-forwarded-uri'), ...requestHeaders(request, 'x-original-uri')];
  const methods = requestHeaders(request, 'x-forwarded-method');
  const preflight = served.corsPreflight && methods.length > 0 && methods.every((m) => m === 'OPTIONS') && requestHeaders(request, 'origin').length > 0 && requestHeaders(request, 'access-control-request-method').length > 0;
  if (preflight) return found;
  if (uris.length === 0) add('allow-unauthenticated', `forward-auth ${served.id}: no forwarded URI`, `${answer.status} without an identity and without a forwarded URI: ${summary}`);
  for (const uri of uris) {
    const judged = publicForEveryReading(uri, served.publicPaths);
    if (!judged.public) {
      const why = shapeHost(request) !== 'served app' ? 'X-Forwarded-Host names another app' : methods.includes('OPTIONS') ? 'X-Forwarded-Method OPTIONS without a real preflight' : uris.length > 1 ? 'several URI headers' : shape(uri);
      add('allow-unauthenticated', `forward-auth ${served.id}: ${why}`, `${answer.status} without an identity, yet an app reads ${JSON.stringify(uri)} as ${JSON.stringify(judged.privateReading)}: ${summary}`);
      break;
    }
  }
  return found;
}

/** Which forwarded host the request named, relative to the app served (for grouping). */
function shapeHost(request: FuzzRequest): string {
  const hosts = requestHeaders(request, 'x-forwarded-host');
  const other = request.servedApp === 'wiki' ? 'vault' : 'wiki';
  return hosts.map((h) => (h.includes(APPS[request.servedApp!].hostname) && h.includes(APPS[other].hostname) ? 'both' : h.includes(APPS[other].hostname) ? 'other app' : h.toLowerCase().includes(APPS[request.servedApp!].hostname) ? 'served app' : 'other')).join('+') || 'none';
}

/** The main bypass technique a path uses, for grouping findings (not for judging): the first that applies. */
export function shape(target: string): string {
  const path = target.split('?')[0]!;
  const features: Array<[string, boolean]> = [
    ['fragment', target.includes('#')],
    ['comma', path.includes(',')],
    // eslint-disable-next-line no-control-regex -- any byte outside ASCII is what it looks for
    ['unicode', /[^\x00-\x7f]|%ef%bc%8e|%e2%80%a4|%e3%80%82/i.test(path)],
    ['overlong', /%c0|%e0%80|%c1/i.test(path)],
    ['semicolon', path.includes(';')],
    ['double-encoding', /%25/.test(path)],
    ['encoded dot segment', /%2e/i.test(path)],
    ['dot segment', /(^|[/\\])\.\.?([/\\]|$)/.test(path)],
    ['backslash', path.includes('\\')],
    ['double slash', path.includes('//')],
    ['percent-encoded', /%[0-9a-f]{2}/i.test(path)],
    ['trailing dot or slash', /[./]$/.test(path)],
  ];
  return features.find(([, applies]) => applies)?.[0] ?? 'plain';
}

function shapeName(name: string): string {
  return name.includes('_') ? 'underscores' : name === name.toLowerCase() ? 'lower' : 'other';
}
