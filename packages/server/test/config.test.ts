import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../src/config/load.js';
import { parseDuration } from '@gatehouse/contract';
import { parseByteSize } from '../src/config/byteSize.js';

const provider = {
  id: 'corp',
  name: 'Corp SSO',
  issuer: 'https://sso.example.com',
  clientId: 'gatehouse',
  clientSecret: 'shh',
};

function problems(raw: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(raw, { env, cwd: '/srv/gatehouse' });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('built-in defaults: portal on 4180 with the Development IdP and the Partner IdP', () => {
    const { config, file } = loadConfig({ env: {}, cwd: mkdtempSync(path.join(tmpdir(), 'gh-cfg-')) });
    expect(file).toBeUndefined();
    expect(config.publicUrl).toBe('http://localhost:4180');
    expect(config.listen).toEqual({ host: 'localhost', port: 4180 });
    expect(config.providers.map((p) => [p.id, p.name, p.issuer])).toEqual([
      ['dev', 'Development IdP', 'http://localhost:4181'],
      ['partner', 'Partner IdP', 'http://localhost:4183'],
    ]);
    expect(config.session.claimsRefreshInterval).toBe(15 * 60_000);
    expect(config.session.idleTimeout).toBe(12 * 3600_000);
    expect(config.session.absoluteLifetime).toBe(7 * 86400_000);
    expect(config.signIn.attemptLifetime).toBe(600_000);
  });

  it('GATEHOUSE_DATA_DIR chooses the data folder', () => {
    const config = parseConfig({}, { env: { GATEHOUSE_DATA_DIR: '/var/lib/gatehouse' }, cwd: '/srv' });
    expect(config.dataDir).toBe('/var/lib/gatehouse');
  });

  it('reads a YAML file with ${ENV} interpolation and defaults', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-cfg-'));
    const file = path.join(dir, 'gatehouse.yaml');
    writeFileSync(
      file,
      `publicUrl: https://auth.example.com
secrets:
  cookieKey: \${COOKIE_KEY}
providers:
  - id: corp
    name: Corp SSO
    issuer: \${ISSUER:-https://sso.example.com}
    clientId: gatehouse
    clientSecret: \${CLIENT_SECRET}
    clientAuthMethod: client_secret_post
    scopes: [openid, email, profile, groups]
    claims: { groups: roles }
    allowedDomains: [Example.com]
`,
    );
    const { config } = loadConfig({ file, env: { COOKIE_KEY: 'k'.repeat(44), CLIENT_SECRET: 'from-env' }, cwd: dir });
    const corp = config.providers[0]!;
    expect(corp.clientSecret).toBe('from-env');
    expect(corp.issuer).toBe('https://sso.example.com');
    expect(corp.clientAuthMethod).toBe('client_secret_post');
    expect(corp.claims.groups).toBe('roles');
    expect(corp.claims.email).toBe('email');
    expect(corp.allowedDomains).toEqual(['example.com']);
    // A domain list makes first sign-in create users unless said otherwise.
    expect(corp.createUsers).toBe(true);
    expect(config.dataDir).toBe(path.join(dir, 'data'));
  });

  it('names the path of a missing environment variable', () => {
    expect(problems({ providers: [{ ...provider, clientSecret: '${NOPE}' }] })).toEqual([
      'providers[0].clientSecret: environment variable NOPE is not set',
    ]);
  });

  it('environment values cannot change the document structure', () => {
    const config = parseConfig({ organization: { name: '${ORG}' } }, { env: { ORG: 'x\nmode: production' } });
    expect(config.mode).toBe('development');
    expect(config.organization.name).toBe('x\nmode: production');
  });

  it('reports every bad key with its path', () => {
    const found = problems({
      publicUrl: 'https://auth.example.com/portal',
      listen: { port: 70000 },
      session: { idleTimeout: 'soon' },
      providers: [
        { ...provider, issuer: 'http://sso.example.com', clientSecret: undefined },
        { ...provider, scopes: ['email'], clientAuthMethod: 'private_key_jwt' },
      ],
      unknownOption: true,
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^publicUrl: must be an origin/),
        expect.stringMatching(/^listen\.port: /),
        expect.stringMatching(/^session\.idleTimeout: "soon" is not a duration/),
        expect.stringMatching(/^providers\[0\]\.issuer: must be https/),
        expect.stringMatching(/^providers\[0\]\.clientSecret: is required for client_secret_basic/),
        expect.stringMatching(/^providers\[1\]\.scopes: must include "openid"/),
        expect.stringMatching(/^providers\[1\]\.privateKey: is required for private_key_jwt/),
        'unknownOption: unknown key',
      ]),
    );
  });

  // Threat: a bare group in admins.groups makes anyone an admin whose IdP (any IdP, a contractor's
  // included) asserts that name. Each entry must name the provider it is believed from.
  it('admins.groups entries name their provider; a bare group is refused with how to write it', () => {
    const config = parseConfig({ providers: [provider], admins: { groups: [{ provider: 'corp', group: 'gatehouse-admins' }] } }, { env: {} });
    expect(config.admins.groups).toEqual([{ provider: 'corp', group: 'gatehouse-admins' }]);
    expect(problems({ providers: [provider], admins: { groups: ['admins'] } })).toEqual([
      'admins.groups[0]: must name the provider it trusts: { provider: <provider id>, group: "admins" }',
    ]);
    expect(problems({ admins: { groups: [{ provider: 'Corp!', group: '' }, { group: 'admins' }, { provider: 'corp', group: 'x', extra: 1 }] } })).toEqual([
      'admins.groups[0].provider: must be lowercase letters, digits and dashes (at most 63)',
      expect.stringMatching(/^admins\.groups\[0\]\.group: /),
      expect.stringMatching(/^admins\.groups\[1\]\.provider: /),
      'admins.groups[2].extra: unknown key',
    ]);
  });

  it("a provider's groups are untrusted unless said; a group prefix is validated", () => {
    const [corp] = parseConfig({ providers: [provider] }, { env: {} }).providers;
    expect(corp).toMatchObject({ trustGroups: false });
    expect(corp).not.toHaveProperty('groupPrefix');
    expect(parseConfig({ providers: [{ ...provider, trustGroups: true, groupPrefix: 'corp/' }] }, { env: {} }).providers[0]).toMatchObject({ trustGroups: true, groupPrefix: 'corp/' });
    for (const bad of ['', 'partner', ':', 'a b:', 'a,b:', 'é:', 'tab\t:', `${'x'.repeat(64)}:`]) {
      const found = problems({ providers: [{ ...provider, groupPrefix: bad }] });
      expect(found, JSON.stringify(bad)).toEqual([expect.stringMatching(/^providers\[0\]\.groupPrefix: must be 2-64 printable ASCII/)]);
    }
    expect(problems({ providers: [{ ...provider, groupPrefix: 'x:' }] })).toEqual([]);
  });

  it('the default start trusts the Development IdP\'s groups and not the Partner IdP\'s; alice is admin through dev only', () => {
    const { config } = loadConfig({ env: {}, cwd: mkdtempSync(path.join(tmpdir(), 'gh-cfg-')) });
    expect(config.providers.map((p) => [p.id, p.trustGroups, p.groupPrefix])).toEqual([
      ['dev', true, undefined],
      ['partner', false, undefined],
    ]);
    expect(config.admins.groups).toEqual([{ provider: 'dev', group: 'admins' }]);
  });

  // Regression: a value that is not a URL at all made a refinement throw (a 500 in the console).
  it('values that are not URLs are reported, never thrown', () => {
    const found = problems({
      publicUrl: 'not a url',
      providers: [{ ...provider, issuer: 'nope' }],
      apps: [{ id: 'a', name: 'A', publicUrl: 'nope', upstream: 'not a url', policy: { allow: [{ anyUser: true }] } }],
    });
    expect(found).toEqual([
      'publicUrl: must be an absolute http(s) URL',
      'providers[0].issuer: must be an absolute http(s) URL',
      'apps[0].publicUrl: must be an absolute http(s) URL',
      'apps[0].upstream: must be an absolute http(s) URL',
    ]);
  });

  // Threat: every provider's access token (GitHub's never expire) handed to an app. `true` meant exactly
  // that; a file that still says it is refused with what to write instead, never guessed at.
  it('passAccessToken names providers; an old `true` is refused with what to write instead', () => {
    const app = { id: 'a', name: 'A', publicUrl: 'http://a.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } };
    expect(problems({ apps: [{ ...app, passAccessToken: true }] })).toEqual([
      'apps[0].passAccessToken: true is no longer accepted: list the providers whose access token this app receives, e.g. passAccessToken: [github] (a token is a credential: an app gets only the tokens of the providers it names)',
    ]);
    expect(problems({ apps: [{ ...app, passAccessToken: 'corp' }] })).toEqual(['apps[0].passAccessToken: must be a list of provider ids, e.g. [github]']);
    expect(problems({ apps: [{ ...app, passAccessToken: ['corp', 'corp'] }] })).toEqual(['apps[0].passAccessToken: must not name a provider twice']);
    expect(problems({ apps: [{ ...app, passAccessToken: ['Not An Id'] }] })).toEqual(['apps[0].passAccessToken[0]: must be lowercase letters, digits and dashes (at most 63)']);
    const parse = (passAccessToken?: unknown) => parseConfig({ apps: [{ ...app, ...(passAccessToken === undefined ? {} : { passAccessToken }) }] }, { env: {} }).apps[0]!.passAccessToken;
    expect(parse()).toEqual([]);
    // What older files wrote for "no token" still means none.
    expect(parse(false)).toEqual([]);
    expect(parse(['github', 'corp'])).toEqual(['github', 'corp']);
  });

  it('refuses duplicate provider ids', () => {
    expect(problems({ providers: [provider, provider] })).toEqual(['providers[1].id: duplicate provider id "corp"']);
  });

  it('production mode refuses to start without its secrets or with development services', () => {
    expect(problems({ mode: 'production', development: { idps: [{ port: 4181, providerId: 'dev', name: 'Dev' }] } })).toEqual(
      expect.arrayContaining([
        'secrets.cookieKey: is required in production mode',
        'secrets.encryptionKeys: is required in production mode',
        'development: development services cannot run in production mode',
      ]),
    );
    expect(problems({ mode: 'production', secrets: { cookieKey: 'x', encryptionKeys: [{ id: 'k1', key: 'y' }] } })).toEqual([]);
    expect(problems({}, { GATEHOUSE_MODE: 'staging' })[0]).toMatch(/^mode: /);
  });

  it('public IdPs without a domain list create nobody unless told to', () => {
    const config = parseConfig({ providers: [provider] }, { env: {} });
    expect(config.providers[0]!.createUsers).toBe(false);
  });

  it('plain http issuers only on loopback', () => {
    expect(problems({ providers: [{ ...provider, issuer: 'http://127.0.0.1:9000' }] })).toEqual([]);
    expect(problems({ providers: [{ ...provider, issuer: 'http://[::1]:9000' }] })).toEqual([]);
    expect(problems({ providers: [{ ...provider, issuer: 'http://10.0.0.1' }] })[0]).toMatch(/issuer: must be https/);
  });

  it('the documented example is a valid configuration', () => {
    const env = { GATEHOUSE_COOKIE_KEY: 'a'.repeat(44), GATEHOUSE_ENCRYPTION_KEY: 'b'.repeat(44), CORP_CLIENT_SECRET: 's' };
    const { config } = loadConfig({ file: path.join(import.meta.dirname, '../../../gatehouse.example.yaml'), env });
    expect(config.mode).toBe('production');
    expect(config.providers.map((p) => p.id)).toEqual(['corp']);
  });

  it('parses durations', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration(30)).toBe(30_000);
    expect(parseDuration('12 hours')).toBeUndefined();
    expect(parseDuration('-1s')).toBeUndefined();
  });

  it('parses sizes: kB, MB, GB in powers of 1000, KiB, MiB, GiB in powers of 1024, a bare number in bytes', () => {
    expect(parseByteSize('64MB')).toBe(64_000_000);
    expect(parseByteSize('256MiB')).toBe(256 * 2 ** 20);
    expect(parseByteSize('1.5 GiB')).toBe(1.5 * 2 ** 30);
    expect(parseByteSize('512kb')).toBe(512_000);
    expect(parseByteSize('2GB')).toBe(2e9);
    expect(parseByteSize('100B')).toBe(100);
    expect(parseByteSize(1_048_576)).toBe(1_048_576);
    for (const bad of ['64', '64 megabytes', '-1MB', 'MB', '1e3MB', '64TB', '99999999999GB']) expect(parseByteSize(bad), bad).toBeUndefined();
    expect(parseByteSize(1.5)).toBeUndefined();
    expect(parseByteSize(-1)).toBeUndefined();
  });

  it('session.cache.maxMemory: 256MiB unless said, a size of at least 1MiB', () => {
    expect(parseConfig({}, { env: {} }).session.cache.maxMemory).toBe(256 * 2 ** 20);
    expect(parseConfig({ session: { cache: { maxMemory: '1GB' } } }, { env: {} }).session.cache.maxMemory).toBe(1e9);
    expect(problems({ session: { cache: { maxMemory: 'plenty' } } })).toEqual(['session.cache.maxMemory: "plenty" is not a size such as 64MB, 512MiB or 1GB']);
    // Fail closed: a budget too small to hold anything is a mistake, not a way to turn the cache off.
    expect(problems({ session: { cache: { maxMemory: '512KiB' } } })).toEqual(['session.cache.maxMemory: must be at least 1MiB']);
    expect(problems({ session: { cache: { maxMemory: 64 } } })).toEqual(['session.cache.maxMemory: must be at least 1MiB']);
    expect(problems({ session: { cache: { maxEntries: 10 } } })).toEqual(['session.cache.maxEntries: unknown key']);
  });
});
