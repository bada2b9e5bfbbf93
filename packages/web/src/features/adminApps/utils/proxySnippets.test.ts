import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fillTemplate, proxySnippets } from './proxySnippets';

const setup = { gatehouseAddress: '127.0.0.1:4180' };
const PLACEHOLDERS = /\b(LISTEN|SERVER_NAME|SITE_ADDRESS|APP_ID|GATEHOUSE_UPSTREAM)\b/;

const textOf = (proxy: string, index = 0, app = { id: 'hello', publicUrl: 'http://hello.localhost:8080' } as Parameters<typeof proxySnippets>[0]) =>
  proxySnippets(app, setup).find((snippet) => snippet.proxy === proxy)!.files[index]!.text;

describe('the proxy configurations of an app', () => {
  it('fill the shipped templates with the app, leaving only where the proxy reaches an app Gatehouse has no upstream for', () => {
    const nginx = textOf('nginx', 1);
    expect(nginx).toContain('listen 8080;');
    expect(nginx).toContain('server_name hello.localhost;');
    // Gatehouse is the shared file's pool, kept alive; the app has a pool of its own, named after it.
    expect(nginx).toContain('proxy_pass http://gatehouse/.gatehouse/auth/hello;');
    expect(nginx).toContain('rewrite ^ /.gatehouse/forward-auth/hello? break;');
    expect(nginx).toMatch(/^upstream gatehouse-app-hello \{\n\s+server APP_UPSTREAM;\n/m);
    expect(nginx).toContain('proxy_pass http://gatehouse-app-hello;');
    expect(nginx).not.toContain('127.0.0.1:4180');
    const shared = textOf('nginx', 0);
    expect(shared).toContain('listen 8080 default_server;');
    expect(shared).toMatch(/^upstream gatehouse \{\n\s+server 127\.0\.0\.1:4180;\n/m);
    const caddy = textOf('Caddy');
    expect(caddy).toMatch(/^http:\/\/hello\.localhost:8080 \{/m);
    expect(caddy).toContain('uri /.gatehouse/forward-auth/hello?');
    const traefik = textOf('Traefik');
    expect(traefik).toContain('address: http://127.0.0.1:4180/.gatehouse/forward-auth/hello');
    expect(traefik).toContain('rule: Host(`hello.localhost`)');
    expect(traefik).toContain('middlewares: [gatehouse-clean, gatehouse-auth-hello]');
    for (const proxy of ['nginx', 'Caddy', 'Traefik']) {
      for (const file of proxySnippets({ id: 'hello', publicUrl: 'http://hello.localhost:8080' }, setup).find((snippet) => snippet.proxy === proxy)!.files) {
        expect(file.text, `${proxy}: ${file.name}`).not.toMatch(PLACEHOLDERS);
      }
    }
    expect(proxySnippets({ id: 'hello', publicUrl: 'http://hello.localhost:8080' }, setup).every((snippet) => snippet.unfilled.join() === 'APP_UPSTREAM')).toBe(true);
    // nginx and Caddy write host:port, Traefik a URL: the page says which.
    expect(proxySnippets({ id: 'hello', publicUrl: 'http://hello.localhost:8080' }, setup).map((snippet) => snippet.upstreamExample)).toEqual([
      '127.0.0.1:8080',
      '127.0.0.1:8080',
      'http://127.0.0.1:8080',
    ]);
  });

  it('use the upstream Gatehouse knows, and TLS for an https app', () => {
    const app = { id: 'wiki', publicUrl: 'https://wiki.example.com', upstream: 'http://10.0.0.12:8080/' };
    expect(textOf('nginx', 1, app)).toContain('listen 443 ssl;');
    expect(textOf('nginx', 1, app)).toMatch(/^\s+server 10\.0\.0\.12:8080;$/m);
    expect(textOf('nginx', 1, app)).toContain('proxy_pass http://gatehouse-app-wiki;');
    expect(textOf('Caddy', 0, app)).toMatch(/^wiki\.example\.com \{/m);
    expect(textOf('Caddy', 0, app)).toContain('reverse_proxy 10.0.0.12:8080 {');
    expect(textOf('Traefik', 0, app)).toContain('- url: http://10.0.0.12:8080\n');
    expect(proxySnippets(app, setup).every((snippet) => snippet.unfilled.length === 0)).toBe(true);
  });

  it("reach an https upstream over https, at its default port, and never add the upstream's path to nginx's proxy_pass", () => {
    const app = { id: 'wiki', publicUrl: 'https://wiki.example.com', upstream: 'https://wiki.internal/base/' };
    const nginx = textOf('nginx', 1, app);
    expect(nginx).toMatch(/^\s+server wiki\.internal:443;$/m);
    expect(nginx).toContain('proxy_pass https://gatehouse-app-wiki;');
    // A path there would make nginx send the app its normalised path, not the one Gatehouse judged.
    expect(nginx).not.toContain('/base');
    expect(nginx).not.toContain('proxy_pass http://gatehouse-app-wiki;');
  });

  it('are the documented files, word for word, but for the placeholders and their opening comment', () => {
    const template = readFileSync(new URL('../../../../../../docs/deploy/nginx-app.conf', import.meta.url), 'utf8');
    // Everything after the opening comment: the app's upstream block (with its own comment), then the server.
    const body = template.slice(template.indexOf('\n\n') + 2);
    expect(body).toMatch(/^# [^\n]+\n(#[^\n]*\n)*upstream gatehouse-app-APP_ID \{/);
    expect(fillTemplate(template, {})).toBe(body);
  });
});
