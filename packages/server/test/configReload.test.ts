import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { describeChanges, isUnchanged, providersTurnedOff, restartOnlyChanges } from '../src/config/reloadable.js';
import { RunningConfig } from '../src/config/running.js';
import type { ConfigInput } from '../src/config/schema.js';

const provider = (id: string, extra: Record<string, unknown> = {}) => ({ id, name: id, issuer: `https://${id}.example.com`, clientId: 'c', clientSecret: 'secret-value', ...extra });

function config(input: Partial<ConfigInput> = {}) {
  return parseConfig(
    {
      mode: 'production',
      publicUrl: 'https://gatehouse.example.com',
      secrets: { cookieKey: 'a'.repeat(43), encryptionKeys: [{ id: 'k1', key: 'b'.repeat(43) }] },
      providers: [provider('corp')],
      apps: [{ id: 'wiki', name: 'Wiki', publicUrl: 'https://wiki.example.com', upstream: 'http://10.0.0.2:8080', policy: { allow: [{ anyUser: true }] } }],
      ...input,
    },
    { env: {}, cwd: '/srv/gatehouse' },
  );
}

describe('the configuration handed to a starting worker', () => {
  // It travels over the cluster's IPC channel, serialised as JSON (reload.ts, configFromPrimary): what
  // arrives must be the configuration in force, to the last setting.
  it('is the same configuration after a JSON round trip', () => {
    const full = config({
      workers: 2,
      cache: { url: 'redis://:pw@redis.example.com:6379/0' },
      metrics: { listen: { host: '127.0.0.1', port: 9464 } },
      admins: { emails: ['a@example.com'], groups: [{ provider: 'corp', group: 'ops' }] },
      session: { idleTimeout: '8h', absoluteLifetime: '7d' },
      signIn: { rateLimit: { max: 5, window: '1m' } },
      providers: [provider('corp', { allowedDomains: ['example.com'] }), provider('other', { enabled: false })],
    });
    const carried = JSON.parse(JSON.stringify(full)) as typeof full;
    expect(carried).toEqual(full);
    expect(restartOnlyChanges(full, carried)).toEqual([]);
    expect(isUnchanged(describeChanges(full, carried))).toBe(true);
  });
});

describe('what a reload may change', () => {
  it('the same file changes nothing', () => {
    expect(restartOnlyChanges(config(), config())).toEqual([]);
    expect(isUnchanged(describeChanges(config(), config()))).toBe(true);
  });

  it('names each restart-only setting that changed, never its value', () => {
    const after = config({
      listen: { port: 8443 },
      database: { url: 'postgres://gatehouse:hunter2@db/gatehouse' },
      secrets: { cookieKey: 'c'.repeat(43), encryptionKeys: [{ id: 'k1', key: 'b'.repeat(43) }] },
      workers: 4,
      trustedProxies: ['10.0.0.0/8'],
      log: { format: 'json' },
    });
    const changed = restartOnlyChanges(config(), after);
    expect(changed.sort()).toEqual(['database.driver', 'database.url', 'listen.port', 'log.format', 'secrets.cookieKey', 'trustedProxies', 'workers'].sort());
    expect(changed.join()).not.toContain('hunter2');
  });

  it('reloadable settings are not restart-only, and are listed by path', () => {
    const after = config({
      organization: { name: 'Acme' },
      session: { idleTimeout: '1h' },
      signIn: { rateLimit: { max: 5 } },
      forwardAuth: { uriHeader: 'X-Original-URI' },
      log: { level: 'debug' },
      admins: { emails: ['ann@example.com'], groups: [{ provider: 'corp', group: 'ops' }] },
    });
    expect(restartOnlyChanges(config(), after)).toEqual([]);
    const changes = describeChanges(config(), after);
    expect(changes.settings.sort()).toEqual(['forwardAuth.uriHeader', 'log.level', 'organization.name', 'session.idleTimeout', 'signIn.rateLimit'].sort());
    expect(changes.admins).toEqual({ added: ['ann@example.com', 'ops from corp'], removed: [] });
  });

  it('providers and apps: added, removed and changed by id', () => {
    const before = config({ providers: [provider('corp'), provider('old')] });
    const after = config({
      providers: [provider('corp', { scopes: ['openid', 'email'] }), provider('new')],
      apps: [{ id: 'docs', name: 'Docs', publicUrl: 'https://docs.example.com', upstream: 'http://10.0.0.3', policy: { allow: [{ anyUser: true }] } }],
    });
    const changes = describeChanges(before, after);
    expect(changes.providers).toEqual({ added: ['new'], removed: ['old'], changed: ['corp'] });
    expect(changes.apps).toEqual({ added: ['docs'], removed: ['wiki'], changed: [] });
  });

  it('the sessions of providers removed or turned off end; of one turned on or left alone, not', () => {
    const before = config({ providers: [provider('corp'), provider('gone'), provider('off'), provider('was-off', { enabled: false })] });
    const after = config({ providers: [provider('corp'), provider('off', { enabled: false }), provider('was-off')] });
    expect(providersTurnedOff(before, after)).toEqual(['gone', 'off']);
  });

  it('a key it does not know is restart-only (fail closed)', () => {
    const before = config();
    const after = { ...config(), future: { setting: true } } as unknown as ReturnType<typeof config>;
    expect(restartOnlyChanges(before, after)).toEqual(['future']);
  });

  it('the metrics listener and the access log need a restart', () => {
    const before = config();
    const after = { ...config(), metrics: { listen: { host: '127.0.0.1', port: 9090 }, hosts: [] }, accessLog: { ...before.accessLog, enabled: !before.accessLog.enabled } };
    expect(restartOnlyChanges(before, after)).toEqual(['accessLog.enabled', 'metrics']);
  });
});

describe('the running configuration', () => {
  it('what reads `current` at use reads the configuration in force after a reload', () => {
    const running = new RunningConfig(config(), '/etc/gatehouse/gatehouse.yaml');
    // As services.ts hands a section to what is built once (the session store, the user directory).
    const admins = () => running.current.admins;
    const { session } = running.current;
    running.replace(config({ admins: { emails: ['ann@example.com'] }, session: { idleTimeout: '1h' } }));
    expect(admins()).toEqual({ emails: ['ann@example.com'], groups: [] });
    expect(running.current.session.idleTimeout).toBe(3_600_000);
    // What was taken out of it before is the old one, whole.
    expect(session.idleTimeout).toBe(12 * 3_600_000);
  });

  it('puts a configuration in force only through a reload', () => {
    const running = new RunningConfig(config(), undefined);
    expect(() => {
      (running as { current: unknown }).current = config({ admins: { emails: ['eve@example.com'] } });
    }).toThrow(TypeError);
    expect(running.current.admins.emails).toEqual([]);
  });

  it('reports the last reload for /readyz', () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const running = new RunningConfig(config(), '/etc/gatehouse/gatehouse.yaml', () => now);
    expect(running.report()).toEqual({ file: '/etc/gatehouse/gatehouse.yaml', loadedAt: '2026-01-01T00:00:00.000Z', lastReload: null });
    now += 60_000;
    running.refused(['listen.port: changed']);
    expect(running.report()).toEqual({
      file: '/etc/gatehouse/gatehouse.yaml',
      loadedAt: '2026-01-01T00:00:00.000Z',
      lastReload: { at: '2026-01-01T00:01:00.000Z', outcome: 'refused', problems: ['listen.port: changed'] },
    });
  });
});
