import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtInDefaults } from '../src/config/defaults.js';
import { ConfigError, loadConfig, parseConfig } from '../src/config/load.js';
import { describeChanges, restartOnlyChanges } from '../src/config/reloadable.js';

/** A gatehouse.yaml in a folder of its own, read as `start` reads it. */
function fromFile(text: string, env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'gh-extends-'));
  const file = path.join(dir, 'gatehouse.yaml');
  writeFileSync(file, text);
  return loadConfig({ file, env, cwd: dir }).config;
}

function problems(raw: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(raw, { env, cwd: '/srv/gatehouse' });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('extends: development-defaults', () => {
  it('adds an app to the default start: the development IdPs, demo apps, admins and metrics stay', () => {
    const config = fromFile(`extends: development-defaults
apps:
  - id: hello
    name: Hello
    publicUrl: http://hello.localhost:8080
    policy: { allow: [{ groups: [staff] }] }
`);
    const defaults = parseConfig(builtInDefaults, { env: {} });
    expect(config.mode).toBe('development');
    expect(config.providers.map((provider) => provider.id)).toEqual(['dev', 'partner']);
    // The file's entries first, in its order (so a problem in one is reported where the file has it).
    expect(config.apps.map((app) => app.id)).toEqual(['hello', 'whoami', 'admin-demo', 'demo-oidc']);
    expect(config.apps[0]!.upstream).toBeUndefined();
    expect(config.admins).toEqual(defaults.admins);
    expect(config.development).toEqual(defaults.development);
    expect(config.metrics).toEqual(defaults.metrics);
    expect(config.publicUrl).toBe('http://localhost:4180');
  });

  it('an entry with an id the defaults have merges into it; lists of plain values replace', () => {
    const config = fromFile(`extends: development-defaults
apps:
  - id: whoami
    policy: { allow: [{ emails: [carol@partner.example] }] }
development:
  idps:
    - { providerId: partner, trustGroups: true, groupPrefix: "partner:" }
admins:
  emails: [root@example.com]
trustedProxies: [10.0.0.7]
organization: { name: Acme }
`);
    const whoami = config.apps.find((app) => app.id === 'whoami')!;
    // Everything the file does not say is the default entry's...
    expect(whoami).toMatchObject({ name: 'Whoami', publicUrl: 'http://whoami.localhost:4180', upstream: 'http://localhost:4182', websockets: true, preserveHost: true });
    // ...and a list inside it (the allow rules) is the file's, not the two together.
    expect(whoami.policy.allow).toEqual([{ emails: ['carol@partner.example'] }]);
    expect(config.development.idps.map((idp) => [idp.providerId, idp.port, idp.trustGroups, idp.groupPrefix])).toEqual([
      ['partner', 4183, true, 'partner:'],
      ['dev', 4181, true, undefined],
    ]);
    // Mappings merge: the defaults' admin group stays beside the file's email.
    expect(config.admins).toEqual({ emails: ['root@example.com'], groups: [{ provider: 'dev', group: 'admins' }] });
    expect(config.trustedProxies).toEqual(['10.0.0.7']);
    expect(config.organization.name).toBe('Acme');
  });

  it('lays the development services out around listen.port, so a second Gatehouse has IdPs of its own', () => {
    const config = fromFile('extends: development-defaults\nlisten: { port: 4280 }\n');
    expect(config.publicUrl).toBe('http://localhost:4280');
    // A database and development keys of its own, beside the first one's ./data.
    expect(path.basename(config.dataDir)).toBe('data-4280');
    expect(config.listen).toEqual({ host: 'localhost', port: 4280 });
    expect(config.development.idps.map((idp) => [idp.providerId, idp.port])).toEqual([
      ['dev', 4281],
      ['partner', 4283],
    ]);
    expect(config.development.demoApp).toEqual({ port: 4282 });
    expect(config.metrics?.listen).toEqual({ host: '127.0.0.1', port: 4289 });
    // The providers those IdPs are registered as, and the demo apps on the new port.
    expect(config.providers.map((provider) => provider.issuer)).toEqual(['http://localhost:4281', 'http://localhost:4283']);
    expect(config.apps.map((app) => [app.publicUrl, app.upstream])).toEqual([
      ['http://whoami.localhost:4280', 'http://localhost:4282'],
      ['http://admin-demo.localhost:4280', 'http://localhost:4282'],
      ['http://127.0.0.1:4282', undefined],
    ]);
    // The demo as an OpenID Connect client: its registered URIs on the new port too.
    expect(config.apps.find((app) => app.id === 'demo-oidc')?.oidc).toMatchObject({
      redirectUris: ['http://127.0.0.1:4282/callback'],
      backchannelLogoutUri: 'http://127.0.0.1:4282/backchannel-logout',
    });
  });

  it('the file wins over the layout: a port it names stays', () => {
    const config = fromFile('extends: development-defaults\nlisten: { port: 4280 }\nmetrics: { listen: { port: 9100 } }\ndevelopment: { demoApp: false }\n');
    expect(config.metrics?.listen).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(config.development.demoApp).toBe(false);
    expect(path.basename(fromFile('extends: development-defaults\nlisten: { port: 4280 }\ndataDir: ./elsewhere\n').dataDir)).toBe('elsewhere');
    expect(path.basename(fromFile('extends: development-defaults\n').dataDir)).toBe('data');
  });

  // Threat: the development IdPs (known passwords, anyone an admin) and loopback trust reaching a
  // production deployment through a file that was meant for a try. Fail closed: refused, nothing merged.
  it('is refused in production mode, whether the file or GATEHOUSE_MODE says production', () => {
    const secrets = { cookieKey: 'k'.repeat(44), encryptionKeys: [{ id: 'k1', key: 'e'.repeat(44) }] };
    expect(problems({ extends: 'development-defaults', mode: 'production', secrets })).toEqual([
      'extends: development-defaults is for development mode only: a production file says everything it means',
    ]);
    expect(problems({ extends: 'development-defaults', secrets }, { GATEHOUSE_MODE: 'production' })).toEqual([
      'extends: development-defaults is for development mode only: a production file says everything it means',
    ]);
  });

  it('an app added to such a file is applied by a reload, without a restart', () => {
    // One file, read at start and again after an edit, as a reload reads it.
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-extends-'));
    const file = path.join(dir, 'gatehouse.yaml');
    writeFileSync(file, 'extends: development-defaults\n');
    const before = loadConfig({ file, env: {}, cwd: dir }).config;
    writeFileSync(file, 'extends: development-defaults\napps: [{ id: hello, name: Hello, publicUrl: "http://hello.localhost:8080", policy: { allow: [{ groups: [staff] }] } }]\n');
    const after = loadConfig({ file, env: {}, cwd: dir }).config;
    expect(restartOnlyChanges(before, after)).toEqual([]);
    expect(describeChanges(before, after).apps).toEqual({ added: ['hello'], removed: [], changed: [] });
  });

  // Threat: prototype pollution through the merge. A "__proto__" key in the file (YAML and JSON keep
  // it as a key) must stay a key, which the schema refuses, and never become an object's prototype.
  it('keeps a "__proto__" key a key: refused, nothing inherited', () => {
    const found = problems(JSON.parse('{"extends": "development-defaults", "organization": {"__proto__": {"name": "Evil", "contact": "x"}}}'));
    expect(found).toEqual(['organization.__proto__: unknown key']);
    expect(({} as { name?: string }).name).toBeUndefined();
    // Nor does one in YAML lend the defaults' layout a port: the file is refused.
    expect(() => fromFile('extends: development-defaults\nlisten:\n  __proto__: { port: 4280 }\n')).toThrow(/listen\.__proto__: unknown key/);
  });

  it('names nothing else', () => {
    expect(problems({ extends: 'defaults' })).toEqual(['extends: must be development-defaults (the only configuration a file can extend)']);
  });

  it('without it, a file replaces the defaults: no development IdP, no demo app', () => {
    const config = fromFile('organization: { name: Acme }\n');
    expect(config.providers).toEqual([]);
    expect(config.apps).toEqual([]);
    expect(config.development).toEqual({ idps: [], demoApp: false });
  });
});

describe('trustedProxies left out', () => {
  it('trusts proxies on loopback in development mode, so nginx on the same machine works at once', () => {
    expect(parseConfig(builtInDefaults, { env: {} }).trustedProxies).toEqual(['127.0.0.0/8', '::1']);
    expect(parseConfig({}, { env: {} }).trustedProxies).toEqual(['127.0.0.0/8', '::1']);
  });

  // Threat: any process that can reach Gatehouse describing requests in X-Forwarded-* (another host,
  // another path) in production, where nobody chose to believe it. Fail closed: nobody is trusted.
  it('trusts nobody in production mode', () => {
    const secrets = { cookieKey: 'k'.repeat(44), encryptionKeys: [{ id: 'k1', key: 'e'.repeat(44) }] };
    expect(parseConfig({ mode: 'production', secrets }, { env: {} }).trustedProxies).toEqual([]);
  });

  it('a list the file gives is the list, an empty one included', () => {
    expect(parseConfig({ trustedProxies: [] }, { env: {} }).trustedProxies).toEqual([]);
    expect(parseConfig({ trustedProxies: ['10.0.0.7'] }, { env: {} }).trustedProxies).toEqual(['10.0.0.7']);
  });
});
