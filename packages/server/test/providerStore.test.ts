import SQLite from 'better-sqlite3';
import { exportJWK, generateKeyPair } from 'jose';
import { Kysely, SqliteDialect } from 'kysely';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountStore } from '../src/accounts/accountStore.js';
import { ProviderStore } from '../src/providers/providerStore.js';
import { providerAuditView, providerView } from '../src/providers/providerView.js';
import type { DiscoveryPreview } from '@gatehouse/contract';
import { ProviderRegistry } from '../src/providers/providerRegistry.js';
import { providerSchema } from '../src/config/schema.js';
import { AppError } from '../src/errors.js';
import { createTokenCipher } from '../src/sessions/tokenCipher.js';
import { migrateToLatest } from '../src/storage/migrate.js';
import type { Database } from '../src/storage/schema.js';

const log = pino({ level: 'silent' });
const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 3)]]), currentKeyId: 'k1' });
const SECRET = 'correct-horse-battery-staple';
const corp = { id: 'corp', name: 'Corp SSO', issuer: 'https://sso.corp.example', clientId: 'gatehouse', clientSecret: SECRET };
const preview = (pkce: DiscoveryPreview['pkce'] = 'S256') => ({ pkce }) as DiscoveryPreview;

let db: Kysely<Database>;
let registry: ProviderRegistry;
let store: ProviderStore;
let checked: string[];
let issuerAnswer: () => Promise<DiscoveryPreview>;

beforeEach(async () => {
  db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
  await migrateToLatest(db);
  registry = new ProviderRegistry([providerSchema.parse({ id: 'dev', name: 'Development IdP', issuer: 'http://localhost:4181', clientId: 'g', clientSecret: 'dev-secret' })], log);
  checked = [];
  issuerAnswer = async () => preview();
  store = new ProviderStore({ db, registry, cipher, accounts: new AccountStore(db), log }, async (issuer) => {
    checked.push(issuer);
    return issuerAnswer();
  });
});
afterEach(async () => {
  registry.close();
  await db.destroy();
});

/** The catalogue code (and, for validation, the field problems) a failing call answers. */
async function failure(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof AppError) return error.code === 'bad_request' ? `bad_request: ${error.message}` : error.code;
    throw error;
  }
  return 'no error';
}

async function linkIdentity(providerId: string) {
  const now = Date.now();
  await db.insertInto('users').values({ id: 'u1', email: 'ann@corp.example', name: 'Ann', picture: null, status: 'active', roles: '[]', primary_identity_id: null, created_at: now, updated_at: now, last_sign_in_at: now }).execute();
  await db.insertInto('identities').values({ id: 'i1', user_id: 'u1', provider_id: providerId, subject: 'sub-1', email: 'ann@corp.example', email_verified: 1, claims: '{}', linked_at: now, last_used_at: now }).execute();
}

describe('console providers: validation', () => {
  it('validates like gatehouse.yaml, naming each bad field', async () => {
    expect(await failure(store.create({ ...corp, issuer: 'http://sso.corp.example' }))).toContain('issuer: must be https');
    expect(await failure(store.create({ ...corp, clientSecret: undefined }))).toContain('clientSecret: is required for client_secret_basic');
    expect(await failure(store.create({ ...corp, scopes: ['email'] }))).toContain('scopes: must include "openid"');
    expect(await failure(store.create({ ...corp, id: 'Not A Slug' }))).toContain('id: must be lowercase');
    expect(await failure(store.create({ ...corp, hasClientSecret: true }))).toContain('Unrecognized key');
    expect(await failure(store.create({ ...corp, clientSecret: '' }))).toContain('clientSecret: must not be empty');
    expect(await failure(store.create('corp'))).toContain('must be a provider definition');
    expect(checked).toEqual([]);
  });

  it('ids are unique across config and console providers', async () => {
    // A taken id is a conflict (409), beside the id field, not a malformed request (400).
    const fromConfig = await store.create({ ...corp, id: 'dev' }).catch((error: unknown) => error as AppError);
    expect(fromConfig).toMatchObject({ code: 'conflict', status: 409, field: 'id', message: 'A provider in the configuration file already has the id "dev". Choose another.' });
    await store.create(corp);
    const again = await store.create({ ...corp, name: 'Again' }).catch((error: unknown) => error as AppError);
    expect(again).toMatchObject({ code: 'conflict', status: 409, field: 'id', message: 'Another provider already has the id "corp". Choose another.' });
  });

  it('is saved only when its issuer answers discovery with PKCE S256 (or does not say)', async () => {
    issuerAnswer = async () => {
      throw new AppError('issuer_unreachable', { params: { issuer: corp.issuer } });
    };
    expect(await failure(store.create(corp))).toBe('issuer_unreachable');
    issuerAnswer = async () => preview('unsupported');
    expect(await failure(store.create(corp))).toBe('pkce_unsupported');
    issuerAnswer = async () => preview('not-advertised');
    await store.create(corp);
    expect(registry.find('corp')?.clientSecret).toBe(SECRET);
    expect(registry.source('corp')).toBe('console');
  });

  it('the id and the on/off state are not changed by a replace; config providers are read-only', async () => {
    await store.create(corp);
    expect(await failure(store.update('corp', { ...corp, id: 'other' }))).toContain('id: cannot change');
    expect(await failure(store.update('corp', { ...corp, enabled: false }))).toContain('enabled: turn a provider on or off');
    expect(await failure(store.update('dev', corp))).toBe('provider_from_config');
    expect(await failure(store.setEnabled('dev', false))).toBe('provider_from_config');
    expect(await failure(store.remove('dev'))).toBe('provider_from_config');
    expect(await failure(store.update('nope', corp))).toBe('not_found');
  });

  it('an issuer is checked again only when it changes, and never changes under linked identities', async () => {
    await store.create(corp);
    await store.update('corp', { ...corp, name: 'Renamed' });
    expect(checked).toEqual([corp.issuer]);
    await store.update('corp', { ...corp, issuer: 'https://new.corp.example' });
    expect(checked).toEqual([corp.issuer, 'https://new.corp.example']);
    await linkIdentity('corp');
    // Threat: identities are (provider, subject); another issuer's subjects would sign into these accounts.
    expect(await failure(store.update('corp', { ...corp, issuer: 'https://evil.example' }))).toBe('provider_in_use');
    expect(await failure(store.remove('corp'))).toBe('provider_in_use');
    await store.setEnabled('corp', false);
    expect(registry.get('corp')).toBeUndefined();
    expect(registry.find('corp')?.enabled).toBe(false);
  });
});

describe('console providers: credentials are write-only and encrypted at rest', () => {
  it('a replace without clientSecret keeps it; a new one replaces it; the audit says which, never the value', async () => {
    await store.create(corp);
    const { before, after, replaced } = await store.update('corp', { ...corp, clientSecret: undefined, name: 'Corp' });
    expect(after.clientSecret).toBe(SECRET);
    expect(replaced).toEqual({ clientSecret: false, privateKey: false });
    const rotated = await store.update('corp', { ...corp, clientSecret: 'rotated-secret' });
    expect(rotated.after.clientSecret).toBe('rotated-secret');
    const audit = JSON.stringify([providerAuditView(before), providerAuditView(rotated.after, rotated.replaced)]);
    expect(audit).not.toContain(SECRET);
    expect(audit).not.toContain('rotated-secret');
    expect(providerAuditView(before)).toMatchObject({ clientSecret: '(set)' });
    expect(providerAuditView(rotated.after, rotated.replaced)).toMatchObject({ clientSecret: '(replaced)' });
  });

  it('the API view says whether a secret is set, never what it is', async () => {
    const created = await store.create(corp);
    const view = providerView(created, registry, 'https://auth.example.com', 0);
    expect(JSON.stringify(view)).not.toContain(SECRET);
    expect(view).toMatchObject({ hasClientSecret: true, hasPrivateKey: false, source: 'console', redirectUri: 'https://auth.example.com/.gatehouse/callback/corp' });
    expect(view).not.toHaveProperty('clientSecret');
  });

  it('is stored apart from the definition, encrypted and bound to the provider', async () => {
    await store.create(corp);
    const row = await db.selectFrom('providers').selectAll().where('id', '=', 'corp').executeTakeFirstOrThrow();
    expect(row.definition).not.toContain(SECRET);
    expect(row.client_secret_enc).toMatch(/^v1\.k1\./);
    expect(row.client_secret_enc).not.toContain(SECRET);
    expect(row.private_key_enc).toBeNull();
    // Threat: a ciphertext copied into another provider's row must not decrypt there (and that
    // provider is left out rather than loaded without its credential).
    issuerAnswer = async () => preview();
    await store.create({ ...corp, id: 'other', clientSecret: 'other-secret' });
    await db.updateTable('providers').set({ client_secret_enc: row.client_secret_enc }).where('id', '=', 'other').execute();
    const loaded = await store.load();
    expect(loaded.map((provider) => provider.id)).toEqual(['corp']);
    expect(registry.find('other')).toBeUndefined();
  });

  it('switching to private_key_jwt needs a usable private key, and drops the client secret', async () => {
    await store.create(corp);
    const noKey = await failure(store.update('corp', { ...corp, clientSecret: undefined, clientAuthMethod: 'private_key_jwt' }));
    expect(noKey).toContain('privateKey: is required for private_key_jwt');
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const publicOnly = { ...(await exportJWK(publicKey)), d: 'AAAA' };
    expect(await failure(store.update('corp', { ...corp, clientAuthMethod: 'private_key_jwt', privateKey: publicOnly }))).toContain('privateKey: is not a usable private key');
    const jwk = { ...(await exportJWK(privateKey)), kid: 'k-1' };
    const { after } = await store.update('corp', { ...corp, clientSecret: undefined, clientAuthMethod: 'private_key_jwt', privateKey: jwk });
    expect(after.clientSecret).toBeUndefined();
    expect(after.privateKey).toMatchObject({ kty: 'EC', kid: 'k-1' });
    const row = await db.selectFrom('providers').selectAll().where('id', '=', 'corp').executeTakeFirstOrThrow();
    expect(row.client_secret_enc).toBeNull();
    expect(row.private_key_enc).not.toContain(jwk.d!);
    expect(JSON.stringify(providerAuditView(after, { privateKey: true }))).not.toContain(jwk.d!);
    // Reloaded from the database, it is the same provider.
    await store.load();
    expect(registry.find('corp')?.privateKey).toEqual(jwk);
  });
});
