import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedBrowser } from '../support/browser.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from '../support/hostileIdp.js';
import { signedInBrowser } from '../support/signedIn.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

// Threat class: malformed input reaching a code path that was never meant to see it — a 5xx (a crash
// or an unhandled parser error), a framework's own error body (which leaks the framework and echoes
// the input), or, worse, a session adopted from a cookie that should not count. Every malformed
// request URI and cookie must fail closed with a catalogue answer: 4xx, problem+json for the API and
// JSON clients, the error page for people, with a reference id.

let idp: HostileIdp;
let upstream: Upstream;
let gatehouse: RunningGatehouse;
let appOrigin: string;
let signedIn: ScriptedBrowser;

beforeAll(async () => {
  idp = await startHostileIdp('gatehouse');
  upstream = await startUpstream();
  const port = await freePort();
  appOrigin = `http://app.localhost:${port}`;
  gatehouse = await startGatehouse({
    port,
    providers: [{ id: 'idp', name: 'Test IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [{ id: 'app', name: 'App', publicUrl: appOrigin, upstream: upstream.url, policy: { allow: [{ anyUser: true }] } }],
  });
  signedIn = await signedInBrowser(gatehouse, 'idp', { appOrigin, loopbackHosts: ['app.localhost'] });
});
afterAll(async () => {
  await gatehouse?.close();
  await upstream?.close();
  await idp?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request written as given (no URL normalisation by a client library), to the server on loopback. */
function send(target: string, headers: Record<string, string | string[]>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: gatehouse.port, path: target, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end();
  });
}

function expectProblem(answer: Answer, status: number, code: string, what: string): void {
  expect(answer.status, what).toBe(status);
  expect(answer.headers['content-type'], what).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(answer.body) as { code: string; status: number; reference: string };
  expect(problem.code, what).toBe(code);
  expect(problem.status, what).toBe(status);
  expect(problem.reference, what).toMatch(/\S{6,}/);
  expect(answer.body, what).not.toContain('FST_');
}

function expectErrorPage(answer: Answer, status: number, code: string, what: string): void {
  expect(answer.status, what).toBe(status);
  expect(answer.headers['content-type'], what).toMatch(/^text\/html/);
  expect(answer.body, what).toContain(code);
  expect(answer.body, what).not.toContain('FST_');
  // The page can be neither framed nor sniffed as something else.
  expect(String(answer.headers['content-security-policy']), what).toContain("frame-ancestors 'none'");
  expect(answer.headers['x-content-type-options'], what).toBe('nosniff');
}

describe('malformed request URIs on the portal', () => {
  // Percent-encodings that do not decode (a lone %, a non-hex digit, a truncated or invalid UTF-8
  // sequence, an overlong encoding), in every part of the portal's address space.
  const targets = ['/%', '/%E0%A4%A', '/%zz', '/%C0%AF', '/%ED%A0%80', '/api/%zz', '/api/%', '/api/admin/users/%E0%A4%A', '/.gatehouse/sign-in/%zz', '/.gatehouse/callback/%', '/sign-in/%ff'];

  it('answer 400 bad_request as problem+json to the API and to JSON clients, never Fastify’s own body', async () => {
    for (const target of targets) {
      expectProblem(await send(target, { host: `localhost:${gatehouse.port}`, accept: 'application/json' }), 400, 'bad_request', target);
    }
  });

  it('answer people with the error page (and still problem+json under /api)', async () => {
    for (const target of targets) {
      const answer = await send(target, { host: `localhost:${gatehouse.port}`, accept: 'text/html' });
      if (target.startsWith('/api/')) expectProblem(answer, 400, 'bad_request', target);
      else expectErrorPage(answer, 400, 'bad_request', target);
    }
  });

  it('over-long route parameters are a 400 too, not a 414 body of the framework', async () => {
    const long = `/api/admin/users/${'a'.repeat(500)}`;
    expectProblem(await send(long, { host: `localhost:${gatehouse.port}`, accept: 'application/json' }), 400, 'bad_request', 'long parameter');
  });

  it('malformed query strings never make a 5xx', async () => {
    for (const target of ['/sign-in?x=%', '/api/session?%=%', '/.gatehouse/sign-in/idp?rd=%E0%A4%A', '/.gatehouse/callback/idp?state=%&code=%zz', '/api/apps?a[b]=%00']) {
      const answer = await send(target, { host: `localhost:${gatehouse.port}`, accept: 'application/json' });
      expect(answer.status, target).toBeLessThan(500);
      expect(answer.body, target).not.toContain('FST_');
    }
  });
});

describe('malformed request URIs on an app host', () => {
  // The app host's own router (Gatehouse's paths there, and the 401 for a signed-out API client)
  // answers them too, in the catalogue's format.
  const appHost = () => new URL(appOrigin).host;

  it('answer 400 bad_request as problem+json, signed out or signed in, never Fastify’s own body', async () => {
    for (const target of ['/%', '/%E0%A4%A', '/api/%zz', '/.gatehouse/%zz', '/.gatehouse/start/%']) {
      expectProblem(await send(target, { host: appHost(), accept: 'application/json' }), 400, 'bad_request', target);
    }
    const cookie = `gatehouse_app=${signedIn.cookie('app.localhost', 'gatehouse_app')!}`;
    expectProblem(await send('/.gatehouse/%zz', { host: appHost(), accept: 'application/json', cookie }), 400, 'bad_request', 'signed in');
  });
});

describe("an encoded spelling of Gatehouse's own paths on an app host", () => {
  // Threat: a path that only decodes to "/.gatehouse/…" reached Gatehouse's own endpoints when signed
  // out (the router matches the decoded path) and the app when signed in: two meanings for one path.
  // Only the literal "/.gatehouse/" is Gatehouse's; anything else is the app's, whoever asks.
  const appHost = () => new URL(appOrigin).host;

  it('is the app’s path: a 401 problem signed out, the upstream signed in', async () => {
    for (const target of ['/%2egatehouse/auth', '/%2Egatehouse/jwks.json', '/.gateh%6fuse/start?rd=/x']) {
      expectProblem(await send(target, { host: appHost(), accept: 'application/json' }), 401, 'unauthenticated', target);
    }
    const cookie = `gatehouse_app=${signedIn.cookie('app.localhost', 'gatehouse_app')!}`;
    const answer = await send('/%2egatehouse/jwks.json', { host: appHost(), accept: 'application/json', cookie });
    expect(answer.status).toBe(200);
    expect(upstream.last?.url).toBe('/%2egatehouse/jwks.json');
  });
});

describe('malformed cookies', () => {
  const portal = () => `localhost:${gatehouse.port}`;
  const validSession = () => signedIn.cookie('localhost', 'gatehouse_session')!;
  const validAppToken = () => signedIn.cookie('app.localhost', 'gatehouse_app')!;

  it('the signed-in browser is signed in (the cases below are refusals of a working session’s cookie)', async () => {
    expect((await send('/api/session', { host: portal(), cookie: `gatehouse_session=${validSession()}` })).status).toBe(200);
    expect((await send('/', { host: `app.localhost:${gatehouse.port}`, cookie: `gatehouse_app=${validAppToken()}` })).status).toBe(200);
  });

  it('a session cookie with bad characters, bad encoding or extra bytes is no session: 401, never 5xx', async () => {
    const secret = validSession();
    const values = [
      `${secret}%00`,
      `${secret}x`,
      secret.slice(1),
      `"${secret}"`,
      encodeURIComponent(`${secret}=`),
      `${secret.slice(0, 10)}%zz${secret.slice(13)}`,
      `${secret.slice(0, 10)}%E0%A4%A${secret.slice(18)}`,
      `${secret};`,
      ' ',
      '%',
      'a'.repeat(4000),
    ];
    for (const value of values) {
      const answer = await send('/api/session', { host: portal(), cookie: `gatehouse_session=${value}` });
      if (value === `${secret};`) {
        // The `;` ends the cookie: this is the valid cookie, correctly read.
        expect(answer.status).toBe(200);
        continue;
      }
      expectProblem(answer, 401, 'unauthenticated', value.slice(0, 40));
    }
  });

  it('an over-long Cookie header is refused with the catalogue answer, not a dropped connection', async () => {
    const answer = await send('/api/session', { host: portal(), cookie: `gatehouse_session=${validSession()}; junk=${'a'.repeat(70_000)}` });
    expectProblem(answer, 431, 'request_too_large', 'over-long cookie header');
  });

  it('a __Host- spelling of the cookie does not count on plain http (and the plain one not under another name)', async () => {
    const secret = validSession();
    for (const cookie of [`__Host-gatehouse_session=${secret}`, `__Secure-gatehouse_session=${secret}`, `__host-gatehouse_session=${secret}`, `GATEHOUSE_SESSION=${secret}`, `gatehouse_session =x; x_gatehouse_session=${secret}`]) {
      expectProblem(await send('/api/session', { host: portal(), cookie }), 401, 'unauthenticated', cookie.slice(0, 30));
    }
  });

  it('a duplicated session cookie never signs in as anyone but the cookie’s own session, and never 5xx', async () => {
    const secret = validSession();
    // A garbage value first (a planted or stale cookie): the request is not signed in.
    expectProblem(await send('/api/session', { host: portal(), cookie: `gatehouse_session=garbage; gatehouse_session=${secret}` }), 401, 'unauthenticated', 'garbage first');
    // Two Cookie header lines: Node joins them with "; ", the same as one line.
    expectProblem(await send('/api/session', { host: portal(), cookie: ['gatehouse_session=garbage', `gatehouse_session=${secret}`] }), 401, 'unauthenticated', 'two header lines');
  });

  it('on an app host, a malformed or foreign token is no session: the sign-in redirect or a 401, never the app', async () => {
    const token = validAppToken();
    const app = `app.localhost:${gatehouse.port}`;
    const before = upstream.last;
    for (const cookie of [`gatehouse_app=${token}x`, `gatehouse_app=${token.slice(1)}`, `gatehouse_app=%${token.slice(1)}`, `__Host-gatehouse_app=${token}`, `gatehouse_app=garbage; gatehouse_app=${token}`, `gatehouse_session=${validSession()}`, `gatehouse_app=${'a'.repeat(5000)}`]) {
      const json = await send('/private', { host: app, accept: 'application/json', cookie });
      expectProblem(json, 401, 'unauthenticated', `json ${cookie.slice(0, 30)}`);
      const page = await send('/private', { host: app, accept: 'text/html', cookie });
      expect(page.status, cookie.slice(0, 30)).toBe(302);
      expect(new URL(String(page.headers.location), appOrigin).pathname).toMatch(/^\/\.gatehouse\//);
    }
    expect(upstream.last).toBe(before);
  });
});
