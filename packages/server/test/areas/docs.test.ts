import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DOCS_ROOT } from '../../src/app.js';
import { docsRoutes, documentation } from '../../src/http/docs.js';
import { areaHarness, type AreaHarness, type Person } from '../support/areaHarness.js';

/** The documentation the console links to (a preset's setup guide, the proxy guides), read by admins. */
describe('Gatehouse’s documentation', () => {
  let harness: AreaHarness;
  let admin: Person;
  let bob: Person;
  let outside: string;

  beforeAll(async () => {
    // A docs folder of its own: a guide, a shipped config, a file that is not text, and a symbolic
    // link to a file outside the folder.
    const root = mkdtempSync(path.join(tmpdir(), 'gh-docs-'));
    mkdirSync(path.join(root, 'deploy'));
    writeFileSync(path.join(root, 'deploy', 'nginx.md'), '# nginx\n');
    writeFileSync(path.join(root, 'deploy', 'Caddyfile'), 'SITE_ADDRESS {\n}\n');
    writeFileSync(path.join(root, 'deploy', 'key.pem'), 'not text to publish');
    outside = path.join(mkdtempSync(path.join(tmpdir(), 'gh-outside-')), 'secret.md');
    writeFileSync(outside, 'SECRET');
    symlinkSync(outside, path.join(root, 'deploy', 'linked.md'));
    harness = await areaHarness({}, async (_parts, app) => {
      await app.register(docsRoutes, { root });
    });
    admin = await harness.signIn('root@example.com', { roles: ['admin'] });
    bob = await harness.signIn('bob@example.com');
  });
  afterAll(() => harness?.close());

  const get = (url: string, person?: Person) => harness.app.inject({ method: 'GET', url, headers: person ? { cookie: person.cookie } : {} });

  it('sends an admin a guide as plain text, never as a page', async () => {
    const answer = await get('/docs/deploy/nginx.md', admin);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBe('# nginx\n');
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect((await get('/docs/deploy/Caddyfile?x=1', admin)).body).toBe('SITE_ADDRESS {\n}\n');
  });

  it('sends a signed-out person to sign in first, and tells someone who is not an admin no', async () => {
    const signedOut = await get('/docs/deploy/nginx.md');
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.location).toBe(`/sign-in?rd=${encodeURIComponent('/docs/deploy/nginx.md')}`);
    expect((await get('/docs/deploy/nginx.md', bob)).statusCode).toBe(403);
  });

  // Threat: path traversal, or a link in the folder, handing out a file outside the documentation.
  it('names nothing outside the folder, and nothing in it that is not text', async () => {
    for (const url of [
      '/docs/../package.json',
      '/docs/deploy/../../package.json',
      '/docs/%2e%2e/package.json',
      '/docs/deploy%2fnginx.md',
      '/docs//deploy/nginx.md',
      '/docs/deploy/linked.md',
      '/docs/deploy/key.pem',
      '/docs/deploy',
      '/docs/',
    ]) {
      const answer = await get(url, admin);
      expect(answer.statusCode, url).toBe(404);
      expect(answer.body, url).not.toContain('SECRET');
    }
    expect(readFileSync(outside, 'utf8')).toBe('SECRET');
  });

  it('has every guide the console links to', () => {
    const docs = documentation(DEFAULT_DOCS_ROOT);
    for (const address of ['/docs/deploy/nginx.md', '/docs/deploy/caddy.md', '/docs/deploy/traefik.md', '/docs/deploy/nginx-app.conf', '/docs/deploy/Caddyfile', '/docs/configuration.md', '/docs/providers/google.md',
      // The OpenID Provider's guides and the files an app's page fills in (docs/openid-provider/).
      '/docs/openid-provider.md', ...['grafana.md', 'grafana.ini', 'gitea.md', 'gitea.sh', 'nextcloud.md', 'nextcloud.sh', 'argocd.md', 'argocd-cm.yaml', 'apache.md', 'apache.conf'].map((file) => `/docs/openid-provider/${file}`)]) {
      expect(docs.has(address), address).toBe(true);
    }
  });
});
