import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_ORGANIZATION } from '../../../src/accounts/admission.js';
import { nginxMainConfig } from '../../../../../e2e/support/nginxConfig.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { NGINX, startNginx, type RunningNginx } from '../support/nginx.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/**
 * Kubernetes' ingress-nginx in front of an app, with `nginx.ingress.kubernetes.io/auth-url` pointing at
 * `/.gatehouse/auth/<app id>` and Gatehouse configured with `forwardAuth.uriHeader: X-Original-URL`
 * (docs/deploy/high-availability.md). ingress-nginx cannot run here, so Debian's nginx runs the
 * external-auth location exactly as ingress-nginx writes it for these annotations (its nginx.tmpl): the
 * client's headers passed on, X-Forwarded-Proto cleared, the original request only in X-Original-URL
 * ($scheme://$http_host$request_uri) and X-Original-Method, a 401 sent to the auth-signin URL, the
 * auth-response-headers copied onto the request to the app with proxy_set_header.
 */

let gatehouse: RunningGatehouse;
let upstream: Upstream;
let nginx: RunningNginx | undefined;
let dir: string;
let port = 0;
let wiki = '';
let cookie = '';
let strangerCookie = '';

beforeAll(async () => {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx; scripts/test.sh does it when run as root)');
  port = await freePort();
  const gatehousePort = await freePort();
  wiki = `http://wiki.localhost:${port}`;
  upstream = await startUpstream();
  gatehouse = await startGatehouse({
    port: gatehousePort,
    trustedProxies: ['127.0.0.1/8'],
    forwardAuth: { uriHeader: 'X-Original-URL' },
    session: { claimsRefreshInterval: '1d' },
    providers: [{ id: 'corp', name: 'Corp', issuer: 'http://127.0.0.1:9', clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [{ id: 'wiki', name: 'Wiki', publicUrl: wiki, upstream: upstream.url, publicPaths: ['/public/*'], policy: { allow: [{ emails: ['bob@example.com'] }] } }],
  });
  // bob (allowed) and eve (signed in, not allowed), made through the real stores.
  const { accounts, sessions, appSessions } = gatehouse.services;
  const provider = { id: 'corp', name: 'Corp', allowedDomains: [], createUsers: true, trustEmail: false };
  for (const [who, set] of [
    ['bob', (token: string) => (cookie = `gatehouse_app=${token}`)],
    ['eve', (token: string) => (strangerCookie = `gatehouse_app=${token}`)],
  ] as const) {
    const profile = { subject: who, email: `${who}@example.com`, emailVerified: true, name: who, picture: undefined, groups: [], sid: undefined, extra: {} };
    const { user, identity } = await accounts.signIn(provider, profile, OPEN_ORGANIZATION);
    const { session } = await sessions.create({ userId: user.id, identityId: identity.id, providerId: 'corp' });
    set(await appSessions.create(session.id, 'wiki', wiki));
  }

  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-ingress-'));
  const at = (name: string) => path.join(dir, name);
  const identity = ['User', 'Email', 'Name', 'Groups', 'Assertion'];
  writeFileSync(
    at('nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}${nginxMainConfig(
      dir,
      `    server {
        listen 127.0.0.1:${port};
        server_name wiki.localhost;

        # What ingress-nginx writes for auth-url (an internal location per Ingress path).
        location = /_external-auth-Lw-Prefix {
            internal;
            proxy_pass_request_body     off;
            proxy_set_header            Content-Length          "";
            proxy_set_header            X-Forwarded-Proto       "";
            proxy_set_header            X-Request-ID            $request_id;
            proxy_set_header            Host                    gatehouse.gatehouse.svc.cluster.local;
            proxy_set_header            X-Original-URL          $scheme://$http_host$request_uri;
            proxy_set_header            X-Original-Method       $request_method;
            proxy_set_header            X-Sent-From             "nginx-ingress-controller";
            proxy_set_header            X-Real-IP               $remote_addr;
            proxy_set_header            X-Forwarded-For         $remote_addr;
            proxy_set_header            X-Auth-Request-Redirect $request_uri;
            proxy_buffering             off;
            proxy_buffer_size           4k;
            proxy_buffers               4 4k;
            proxy_request_buffering     on;
            proxy_ssl_server_name       on;
            proxy_pass_request_headers  on;
            proxy_http_version          1.1;
            proxy_pass http://127.0.0.1:${gatehousePort}/.gatehouse/auth/wiki;
        }

        # auth-signin: ${wiki}/.gatehouse/start (ingress-nginx adds rd=<the original URL> itself).
        location @sign-in {
            return 302 $scheme://$http_host/.gatehouse/start?rd=$scheme://$http_host$request_uri;
        }

        location / {
            auth_request        /_external-auth-Lw-Prefix;
            auth_request_set    $auth_cookie $upstream_http_set_cookie;
            add_header          Set-Cookie $auth_cookie;
${identity.map((name, index) => `            auth_request_set    $authHeader${index} $upstream_http_x_gatehouse_${name.toLowerCase()};\n            proxy_set_header    'X-Gatehouse-${name}' $authHeader${index};`).join('\n')}
            error_page 401 = @sign-in;
            proxy_set_header    Host $http_host;
            proxy_pass ${upstream.url};
        }
    }`,
    )}`,
  );
  nginx = await startNginx(dir, () => get('/healthz-of-nginx', {}));
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await gatehouse?.close();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A request to the app through nginx, with the headers exactly as given (raw names, repeated ones allowed). */
function get(pathAndQuery: string, headers: Record<string, string | string[]>, method = 'GET'): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: pathAndQuery, method, headers: { host: `wiki.localhost:${port}`, ...headers } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** What the app received on the last request that reached it (undefined: none did since `mark`). */
function reachedApp(): { url: string; headers: IncomingHttpHeaders } | undefined {
  return upstream.last;
}
const mark = () => (upstream.last = undefined);

describe('ingress-nginx auth-url with forwardAuth.uriHeader: X-Original-URL', () => {
  it('lets bob in with his identity, sends a signed-out browser to sign in, refuses eve', async () => {
    mark();
    const allowed = await get('/docs?page=1', { cookie });
    expect(allowed.status).toBe(200);
    expect(reachedApp()?.url).toBe('/docs?page=1');
    expect(reachedApp()?.headers['x-gatehouse-email']).toBe('bob@example.com');
    expect(reachedApp()?.headers['x-gatehouse-assertion']).toMatch(/^ey/);

    mark();
    const signedOut = await get('/docs', { accept: 'text/html' });
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.location).toBe(`${wiki}/.gatehouse/start?rd=${wiki}/docs`);
    expect(reachedApp()).toBeUndefined();

    mark();
    expect((await get('/docs', { cookie: strangerCookie })).status).toBe(403);
    expect(reachedApp()).toBeUndefined();

    // A public path needs nobody, and the app is told nobody (nginx drops a header set to "").
    mark();
    expect((await get('/public/logo.png', {})).status).toBe(200);
    expect(reachedApp()?.headers['x-gatehouse-email']).toBeUndefined();
  });

  // Threat: the client's own X-Original-URL or X-Original-Method. ingress-nginx overwrites both in the
  // check; the check must judge what nginx will send the app, the request line.
  it('judges the request line, never a URL or method the client sends', async () => {
    mark();
    const spoofed = await get('/private', { 'X-Original-URL': `${wiki}/public/x`, 'X-Original-Method': 'OPTIONS' });
    expect(spoofed.status).toBe(302);
    expect(reachedApp()).toBeUndefined();
  });

  // Threat: a rewrite header the app may route by (X-Forwarded-Uri, X-Original-URI, X-Rewrite-URL),
  // passed on by the proxy, while the check judged the request line.
  it.each(['X-Forwarded-Uri', 'X-Original-URI', 'X-Rewrite-URL', 'X-Forwarded-URI'])('refuses a request that carries %s', async (name) => {
    mark();
    const answer = await get('/public/x', { [name]: '/private' });
    // Refused by the check: nginx turns an auth answer other than 2xx, 401 or 403 into 500; 403 here.
    expect(answer.status).toBe(403);
    expect(reachedApp()).toBeUndefined();
  });

  // Threat: X-Forwarded-Host made up by the client, naming another app's host. ingress-nginx passes
  // it on in the check; in this mode only X-Original-URL describes the request.
  it('never reads X-Forwarded-* in this mode', async () => {
    mark();
    expect((await get('/private', { 'X-Forwarded-Host': 'other.localhost', 'X-Forwarded-Proto': 'https' })).status).toBe(302);
    expect((await get('/docs', { cookie, 'X-Forwarded-Host': 'evil.example' })).status).toBe(200);
  });

  // Threat: a Host the app block also answers (ingress-nginx's catch-all, or a second name) being
  // judged by the policy of the app the auth URL names.
  it("refuses a Host that is not the named app's", async () => {
    mark();
    const answer = await get('/docs', { cookie, host: `wiki.localhost.evil.example:${port}` });
    expect(answer.status).toBe(403);
    expect(reachedApp()).toBeUndefined();
  });

  // Threat: the identity headers made up by the client, in any spelling the app may read.
  it('the app gets the identity headers from Gatehouse only', async () => {
    mark();
    await get('/public/x', { 'X-Gatehouse-Email': 'ceo@example.com', 'x-gatehouse-user': 'ceo' });
    // Gatehouse answers every identity header, empty here; nginx's proxy_set_header replaces the
    // client's copy with it, and drops a header set to "".
    expect(reachedApp()?.headers).not.toHaveProperty('x-gatehouse-email');
    expect(reachedApp()?.headers).not.toHaveProperty('x-gatehouse-user');
    await get('/docs', { cookie, 'X-Gatehouse-Email': 'ceo@example.com' });
    expect(reachedApp()?.headers['x-gatehouse-email']).toBe('bob@example.com');
  });
});
