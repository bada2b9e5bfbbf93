import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppRegistry, clientSecretDigest } from '../../src/apps/appRegistry.js';
import { AppStore } from '../../src/apps/appStore.js';
import { ClientSecretStore, MAX_LIVE_CLIENT_SECRETS } from '../../src/apps/clientSecretStore.js';
import { appSetIssues } from '../../src/config/appSetIssues.js';
import { parseConfig } from '../../src/config/load.js';
import type { AppConfig } from '../../src/config/schema.js';
import type { AppError } from '../../src/errors.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * OpenID Connect clients in the app catalogue: found by client id, apps Gatehouse does not guard
 * (unknown by host and to every path that lets a browser in), and the console's client secrets, on
 * SQLite and on a real PostgreSQL server (where two nodes race for real).
 */
const log = pino({ level: 'silent' });
const PORTAL = 'http://localhost:4180';
const CONFIG_SECRET = 'config-secret-for-grafana-0123456789abcdef';

const policy = { allow: [{ anyUser: true }] };
const guarded = (id: string, host = `${id}.localhost:4180`) => ({ id, name: id, publicUrl: `http://${host}`, upstream: 'http://127.0.0.1:9', policy });
const oidcOnly = (id: string, host = `${id}.example.com`, clientId?: string) => ({
  id,
  name: id,
  publicUrl: `https://${host}`,
  guard: false,
  policy,
  oidc: { ...(clientId ? { clientId } : {}), redirectUris: [`https://${host}/callback`] },
});
const configApps = (...apps: unknown[]): AppConfig[] => parseConfig({ dataDir: '.', apps }, { env: {} }).apps;

describe('the registry: OpenID Connect clients and apps Gatehouse does not guard', () => {
  it('finds a client by its client id (the app id when none is given), with its oidc block', () => {
    const registry = new AppRegistry(configApps(oidcOnly('grafana'), { ...oidcOnly('wiki', 'wiki.example.com', 'wiki-client') }));
    expect(registry.client('grafana')).toMatchObject({ clientId: 'grafana', app: { id: 'grafana' }, oidc: { redirectUris: ['https://grafana.example.com/callback'] } });
    expect(registry.client('wiki-client')?.app.id).toBe('wiki');
    // Threat: a client found by its app id when it has a client id of its own (two names for one client).
    expect(registry.client('wiki')).toBeUndefined();
    expect(registry.client('nothing')).toBeUndefined();
  });

  // Threat: a guard:false app that Gatehouse still answers for (its host proxied, a forward-auth check
  // or a handshake letting a browser in, a return-to sending a freshly signed-in person there).
  it('an app with guard: false is unknown by host, to guarded() and as a return-to origin; get() and all() know it', () => {
    const registry = new AppRegistry(configApps(oidcOnly('grafana', 'grafana.localhost:4180'), guarded('wiki')));
    expect(registry.forHost('grafana.localhost:4180')).toBeUndefined();
    expect(registry.guarded('grafana')).toBeUndefined();
    expect(registry.origins().has('https://grafana.localhost:4180')).toBe(false);
    expect(registry.get('grafana')?.id).toBe('grafana');
    expect(registry.all().map((app) => app.id)).toEqual(['grafana', 'wiki']);
    expect(registry.guarded('wiki')?.id).toBe('wiki');
    expect(registry.origins()).toEqual(new Set(['http://wiki.localhost:4180']));
  });

  it('an app guarded and a client at once is found both ways', () => {
    const both = { ...guarded('wiki'), oidc: { redirectUris: ['https://wiki.example.com/cb'] } };
    const registry = new AppRegistry(configApps(both));
    expect(registry.forHost('wiki.localhost:4180')?.id).toBe('wiki');
    expect(registry.client('wiki')?.app.id).toBe('wiki');
  });

  // Threat: a config file's client secret kept in plain text where the console's views read apps from.
  it('keeps a config client’s secrets only as SHA-256 digests, never on the app', () => {
    const registry = new AppRegistry(configApps({ ...oidcOnly('grafana'), oidc: { ...oidcOnly('grafana').oidc, secrets: [CONFIG_SECRET] } }));
    expect(JSON.stringify(registry.all())).not.toContain(CONFIG_SECRET);
    expect(JSON.stringify(registry.client('grafana'))).not.toContain(CONFIG_SECRET);
    expect(registry.get('grafana')?.oidc?.secrets).toBeUndefined();
    expect(registry.configSecrets('grafana')).toEqual([clientSecretDigest(CONFIG_SECRET)]);
  });

  it('an app the console holds with a client id a config app has is left out (the config app keeps it)', () => {
    const registry = new AppRegistry(configApps(oidcOnly('grafana')), configApps(oidcOnly('other', 'other.example.com', 'grafana')));
    expect(registry.client('grafana')?.app.id).toBe('grafana');
    expect(registry.get('other')).toBeUndefined();
  });
});

describe('rules for a set of apps (check-config and the console alike)', () => {
  it('a client id used twice is reported on the later app, naming the app that holds it', () => {
    const issues = appSetIssues(PORTAL, [oidcOnly('grafana'), oidcOnly('other', 'other.example.com', 'grafana')]);
    expect(issues).toEqual([{ index: 1, field: 'oidc.clientId', message: 'the OpenID Connect client id "grafana" is the app "grafana"\'s already', conflict: true }]);
  });

  it('check-config names the clash at the field', () => {
    expect(() => configApps(oidcOnly('grafana'), oidcOnly('other', 'other.example.com', 'grafana'))).toThrow(/apps\[1\]\.oidc\.clientId: the OpenID Connect client id "grafana" is the app "grafana".s already/);
  });

  it('an app Gatehouse does not guard may share a host, and keep its own scheme; a guarded one may not', () => {
    expect(appSetIssues(PORTAL, [guarded('wiki'), oidcOnly('wiki-sso', 'wiki.localhost:4180')]).map((issue) => issue.message)).toEqual([]);
    expect(appSetIssues(PORTAL, [guarded('wiki'), guarded('again', 'wiki.localhost:4180')]).map((issue) => issue.message)).toEqual(['another app already uses wiki.localhost:4180']);
    // Never the portal's own host, guarded or not: Gatehouse answers there.
    expect(appSetIssues(PORTAL, [oidcOnly('sso', 'localhost:4180')]).map((issue) => issue.message)).toEqual(['must differ from the portal’s publicUrl']);
  });
});

type Opener = { name: string; open: () => Promise<DatabaseHandle>; second?: () => Promise<DatabaseHandle> };
let postgres: TestPostgres | undefined;
let postgresUrl = '';
const openers: Opener[] = [
  { name: 'SQLite', open: () => openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} })) },
  {
    name: 'PostgreSQL',
    open: async () => openDatabase(parseConfig({ dataDir: '.', database: { url: (postgresUrl = await postgres!.createDatabase()), pool: { max: 4 } } }, { env: {} })),
    second: () => openDatabase(parseConfig({ dataDir: '.', database: { url: postgresUrl, pool: { max: 4 } } }, { env: {} })),
  },
];

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(() => postgres?.stop());

describe.each(openers)('console clients and their secrets on $name', ({ open, second }) => {
  let handle: DatabaseHandle;
  let registry: AppRegistry;
  let apps: AppStore;
  let secrets: ClientSecretStore;
  let clock = 1_750_000_000_000;
  const now = () => clock;

  beforeEach(async () => {
    handle = await open();
    registry = new AppRegistry(configApps({ ...oidcOnly('grafana'), oidc: { ...oidcOnly('grafana').oidc, secrets: [CONFIG_SECRET] } }));
    apps = new AppStore(handle.db, registry, PORTAL, now, log);
    secrets = new ClientSecretStore(handle.db, registry, now);
  });
  afterEach(() => handle.close());

  it('an OIDC-only app is stored with no host, so two may share one (and a guarded app keeps its host)', async () => {
    await apps.create(guarded('wiki'));
    await apps.create(oidcOnly('wiki-sso', 'wiki.localhost:4180'));
    await apps.create(oidcOnly('wiki-sso-2', 'wiki.localhost:4180'));
    expect(await handle.db.selectFrom('apps').select(['id', 'host']).orderBy('id').execute()).toEqual([
      { id: 'wiki', host: 'wiki.localhost:4180' },
      { id: 'wiki-sso', host: null },
      { id: 'wiki-sso-2', host: null },
    ]);
    expect(registry.forHost('wiki.localhost:4180')?.id).toBe('wiki');
  });

  // Regression: lifetimes (milliseconds in the parsed definition) were stored as bare numbers, which the
  // schema reads as seconds: every load multiplied them by 1000.
  it('token lifetimes read back as they were saved, load after load', async () => {
    const app = oidcOnly('docs');
    await apps.create({ ...app, oidc: { ...app.oidc, accessTokenLifetime: '5m', refreshTokenLifetime: 90 } });
    for (let round = 0; round < 2; round++) {
      const fresh = new AppRegistry([]);
      await new AppStore(handle.db, fresh, PORTAL, now, log).load();
      expect(fresh.get('docs')?.oidc).toMatchObject({ accessTokenLifetime: 300_000, idTokenLifetime: 3_600_000, refreshTokenLifetime: 90_000 });
      await apps.load();
    }
    await apps.update('docs', { ...app, oidc: { ...app.oidc, idTokenLifetime: '2h' } });
    const fresh = new AppRegistry([]);
    await new AppStore(handle.db, fresh, PORTAL, now, log).load();
    expect(fresh.get('docs')?.oidc).toMatchObject({ accessTokenLifetime: 600_000, idTokenLifetime: 7_200_000 });
  });

  it('a console client id another app holds is a 409 conflict on oidc.clientId, naming it', async () => {
    const refused = await apps.create(oidcOnly('other', 'other.example.com', 'grafana')).catch((error: unknown) => error as AppError);
    expect(refused).toMatchObject({ code: 'conflict', status: 409, field: 'oidc.clientId', message: 'An app in the configuration file ("grafana") already signs in with the client id "grafana". Choose another.' });
    await apps.create(oidcOnly('docs'));
    const changed = await apps.update('docs', oidcOnly('docs', 'docs.example.com', 'grafana')).catch((error: unknown) => error as AppError);
    expect(changed).toMatchObject({ code: 'conflict', field: 'oidc.clientId' });
  });

  // Threat: a client secret typed into a console definition, kept in plain text with it and shown back.
  it('refuses secrets in a console definition', async () => {
    const app = oidcOnly('docs');
    const refused = await apps.create({ ...app, oidc: { ...app.oidc, secrets: ['x'.repeat(40)] } }).then(
      () => expect.fail('a console definition kept a secret'),
      (error: unknown) => error as AppError,
    );
    expect(refused).toMatchObject({ code: 'bad_request', status: 400 });
    expect(refused.message).toContain('oidc.secrets');
  });

  it('a secret is made once, verifies, is listed by its hint only, and stops working when revoked', async () => {
    await apps.create(oidcOnly('docs'));
    const { secret, view } = await secrets.create('docs', 'admin-1');
    // 256 bits as base64url.
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(view).toEqual({ id: view.id, hint: secret.slice(0, 4), createdAt: clock, createdBy: 'admin-1' });
    const row = await handle.db.selectFrom('op_client_secrets').selectAll().executeTakeFirstOrThrow();
    expect(row.secret_hash).toBe(clientSecretDigest(secret).toString('hex'));
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(await secrets.list('docs')).toEqual([view]);
    expect(await secrets.verify('docs', secret)).toBe(true);
    // Threat: a near guess, another app's secret, a non-string accepted.
    expect(await secrets.verify('docs', `${secret}x`)).toBe(false);
    expect(await secrets.verify('docs', secret.slice(0, -1))).toBe(false);
    expect(await secrets.verify('docs', CONFIG_SECRET)).toBe(false);
    expect(await secrets.verify('docs', undefined)).toBe(false);
    expect(await secrets.verify('docs', '')).toBe(false);
    clock += 1000;
    await secrets.revoke('docs', view.id);
    expect(await secrets.verify('docs', secret)).toBe(false);
    expect(await secrets.list('docs')).toEqual([]);
    expect(await secrets.revoke('docs', view.id).catch((error: unknown) => (error as AppError).code)).toBe('not_found');
  });

  it('a config client verifies its file’s secrets; the console makes none for it', async () => {
    expect(await secrets.verify('grafana', CONFIG_SECRET)).toBe(true);
    expect(await secrets.verify('grafana', `${CONFIG_SECRET}0`)).toBe(false);
    expect(await secrets.create('grafana', null).catch((error: unknown) => (error as AppError).code)).toBe('app_from_config');
  });

  // Threat: a config app taking the id of a console app whose secret rows are still there authenticated by them.
  it('a config client never verifies against secret rows stored under its id', async () => {
    await handle.db.insertInto('op_client_secrets').values({ id: 's1', app_id: 'grafana', secret_hash: clientSecretDigest('stale-console-secret').toString('hex'), hint: 'stal', created_at: clock, created_by: null, revoked_at: null }).execute();
    expect(await secrets.verify('grafana', 'stale-console-secret')).toBe(false);
  });

  it('at most two live: a third is refused with client_secret_limit until one is revoked', async () => {
    await apps.create(oidcOnly('docs'));
    const first = await secrets.create('docs', null);
    const secondSecret = await secrets.create('docs', null);
    const third = await secrets.create('docs', null).then(
      () => expect.fail('a third live secret was made'),
      (error: unknown) => error as AppError,
    );
    expect(third).toMatchObject({ code: 'client_secret_limit', status: 409 });
    expect(third.message).toMatch(/revoke one/);
    // Both live ones work meanwhile: rotation without a gap.
    expect(await secrets.verify('docs', first.secret)).toBe(true);
    expect(await secrets.verify('docs', secondSecret.secret)).toBe(true);
    await secrets.revoke('docs', first.view.id);
    await secrets.create('docs', null);
    expect(await secrets.list('docs')).toHaveLength(MAX_LIVE_CLIENT_SECRETS);
  });

  it('an app that does not authenticate with a secret gets none, and verifies none', async () => {
    const app = oidcOnly('spa');
    await apps.create({ ...app, oidc: { ...app.oidc, authentication: 'none' } });
    expect(await secrets.create('spa', null).catch((error: unknown) => error as AppError)).toMatchObject({ code: 'bad_request' });
    await apps.create(guarded('wiki'));
    expect(await secrets.create('wiki', null).catch((error: unknown) => error as AppError)).toMatchObject({ code: 'bad_request' });
  });

  it('an app whose authentication moves away from secrets: its secrets verify nothing more', async () => {
    await apps.create(oidcOnly('docs'));
    const { secret } = await secrets.create('docs', null);
    const app = oidcOnly('docs');
    await apps.update('docs', { ...app, oidc: { ...app.oidc, authentication: 'none' } });
    expect(await secrets.verify('docs', secret)).toBe(false);
  });

  it('deleting the app deletes its secrets', async () => {
    await apps.create(oidcOnly('docs'));
    const { secret } = await secrets.create('docs', null);
    await apps.remove('docs');
    expect(await handle.db.selectFrom('op_client_secrets').select('id').execute()).toEqual([]);
    // A later app of the same id is another app: nothing of the old one's authenticates it.
    await apps.create(oidcOnly('docs'));
    expect(await secrets.verify('docs', secret)).toBe(false);
  });

  if (second) {
    // Threat: two creates at once (two admins, two nodes) each counting one live secret and making three.
    it('two nodes creating secrets at once never make more than two live', async () => {
      const other = await second();
      try {
        await apps.create(oidcOnly('docs'));
        const otherRegistry = new AppRegistry([]);
        await new AppStore(other.db, otherRegistry, PORTAL, now, log).load();
        const nodes = [secrets, new ClientSecretStore(other.db, otherRegistry, now)];
        await secrets.create('docs', null);
        for (let round = 0; round < 3; round++) {
          const outcomes = await Promise.allSettled([nodes[0]!.create('docs', null), nodes[1]!.create('docs', null)]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          expect(((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as AppError).code).toBe('client_secret_limit');
          const live = await secrets.list('docs');
          expect(live).toHaveLength(2);
          await secrets.revoke('docs', live[1]!.id);
        }
      } finally {
        await other.close();
      }
    });

    // An app with no host in the database: a race for its id is told as one, never as a host taken.
    it('two nodes creating OpenID-Connect-only apps with one id at once: one is created, the other refused naming the id', async () => {
      const other = await second();
      try {
        await apps.create(guarded('holder', 'same0.example.com'));
        const nodes = [apps, new AppStore(other.db, new AppRegistry([]), PORTAL, now, log)];
        for (let round = 0; round < 3; round++) {
          const outcomes = await Promise.allSettled([nodes[0]!.create(oidcOnly(`same${round}`, `same${round}.example.com`, `x${round}`)), nodes[1]!.create(oidcOnly(`same${round}`, `same${round}.example.com`, `y${round}`))]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          expect((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict', field: 'id' });
        }
      } finally {
        await other.close();
      }
    });

    // Threat: two apps created with one client id at once, each passing its node's registry check.
    it('two nodes creating apps with one client id at once: one is created, the other refused', async () => {
      const other = await second();
      try {
        const nodes = [apps, new AppStore(other.db, new AppRegistry([]), PORTAL, now, log)];
        for (let round = 0; round < 3; round++) {
          const outcomes = await Promise.allSettled([nodes[0]!.create(oidcOnly(`a${round}`, `a${round}.example.com`, `shared${round}`)), nodes[1]!.create(oidcOnly(`b${round}`, `b${round}.example.com`, `shared${round}`))]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          expect((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict', field: 'oidc.clientId' });
        }
      } finally {
        await other.close();
      }
    });
  }
});

describe('an oidc block’s keys', () => {
  // Threat: a private key pasted as the client's JWKS, stored with the app and shown back on its page.
  it.each([{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'private' }, { kty: 'oct', k: 'c2VjcmV0' }, { kty: 'RSA', n: 'n', e: 'AQAB', p: 'p' }])('refuses a private or symmetric key (%o)', (key) => {
    const app = { ...oidcOnly('keys'), oidc: { authentication: 'private_key_jwt', jwks: { keys: [key] }, redirectUris: ['https://keys.example.com/callback'] } };
    expect(() => configApps(app)).toThrow(/must hold public keys only/);
  });

  it('takes a public key', () => {
    const app = { ...oidcOnly('keys'), oidc: { authentication: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] }, redirectUris: ['https://keys.example.com/callback'] } };
    expect(configApps(app)[0]?.oidc?.jwks?.keys).toHaveLength(1);
  });
});
