import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SigningKeys } from '../../src/keys/signingKeys.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import * as signingKeyPurpose from '../../src/storage/migrations/0012_signing_key_purpose.js';
import type { Database } from '../../src/storage/schema.js';

const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });

describe('assertion signing keys', () => {
  it('rotate with an overlap: the old key stays published, the new one signs', async () => {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    await migrateToLatest(db);
    let now = 1_700_000_000_000;
    const keys = new SigningKeys(db, cipher, () => now);
    await keys.load();
    const first = keys.current().kid;
    expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([first]);
    expect(JSON.stringify(keys.publicJwks())).not.toMatch(/"d"/); // never the private half
    const stored = await db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow();
    expect(stored.private_jwk_enc).toMatch(/^v1\./);
    now += 1000;
    const second = await keys.rotate();
    expect(keys.current().kid).toBe(second);
    expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([second, first]);
    now += 25 * 3_600_000;
    await keys.load();
    expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([second]);
    await db.destroy();
  });
});

describe('signing keys have a purpose', () => {
  const memoryDb = async () => {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    await migrateToLatest(db);
    return db;
  };

  // Threat: a key meant for another kind of token (the OpenID Provider's ID tokens, later) signing an
  // assertion, published in the assertion JWKS or retired by an assertion key's rotation: a token of
  // one kind could then pass as the other, or a rotation would cut keys it does not own.
  it("the assertion keys never use, publish or retire a key of another purpose", async () => {
    const db = await memoryDb();
    // A key of a purpose this version does not sign for, as a later version would store it.
    await db
      .insertInto('signing_keys')
      .values({ kid: 'other', purpose: 'id-token', alg: 'RS256', public_jwk: '{"kid":"other"}', private_jwk_enc: 'v1.k1.x.y', created_at: 1, retired_at: null })
      .execute();
    const keys = new SigningKeys(db, cipher);
    await keys.load();
    expect(keys.purpose).toBe('assertion');
    expect(keys.current().kid).not.toBe('other');
    expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([keys.current().kid]);
    const rotated = await keys.rotate();
    expect(keys.publicJwks().keys.map((key) => key.kid)).not.toContain('other');
    const rows = await db.selectFrom('signing_keys').select(['kid', 'purpose', 'retired_at']).orderBy('created_at').execute();
    expect(rows.find((row) => row.kid === 'other')).toEqual({ kid: 'other', purpose: 'id-token', retired_at: null });
    expect(rows.filter((row) => row.kid !== 'other').map((row) => row.purpose)).toEqual(['assertion', 'assertion']);
    expect(rows.find((row) => row.kid === rotated)?.retired_at).toBeNull();
    await db.destroy();
  });

  it('a key made before keys had a purpose is an assertion key after the upgrade (0012)', async () => {
    const db = await memoryDb();
    const made = new SigningKeys(db, cipher);
    await made.load();
    const kid = made.current().kid;
    // Back to the schema before purposes, with the key in it; then the upgrade.
    await signingKeyPurpose.down(db as never);
    expect(Object.keys((await db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow()) as object)).not.toContain('purpose');
    await signingKeyPurpose.up(db as never);
    expect(await db.selectFrom('signing_keys').select(['kid', 'purpose']).execute()).toEqual([{ kid, purpose: 'assertion' }]);
    const loaded = new SigningKeys(db, cipher);
    await loaded.load();
    expect(loaded.current().kid).toBe(kid);
    await db.destroy();
  });
});

describe('ID token keys', () => {
  const memoryDb = async () => {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    await migrateToLatest(db);
    return db;
  };

  it('publish the next key at once and let it sign only from its time on', async () => {
    // Threat: an app that cached the key set refusing ID tokens signed by a key it has never seen.
    const db = await memoryDb();
    let now = 1_700_000_000_000;
    const keys = new SigningKeys(db, cipher, () => now, undefined, 'id-token-rs256');
    await keys.load();
    const first = keys.current().kid;
    const next = await keys.rotate(3_600_000);
    // Published, not signing: the current key still signs, and the next one can only verify.
    expect(keys.current().kid).toBe(first);
    expect(keys.publicJwks().keys.map((key) => key.kid).sort()).toEqual([first, next].sort());
    const jwks = await keys.privateJwks();
    expect(jwks[0]).toMatchObject({ kid: first, alg: 'RS256', use: 'sig' });
    expect(jwks[0]).not.toHaveProperty('key_ops');
    expect(jwks.find((key) => key.kid === next)).toMatchObject({ key_ops: ['verify'] });
    expect(await keys.nextChangeAt()).toBe(now + 3_600_000);
    // A second rotation while one is waiting would retire a key that never signed: refused.
    await expect(keys.rotate(3_600_000)).rejects.toThrow(/already waiting/);
    now += 3_600_000;
    await keys.load();
    expect(keys.current().kid).toBe(next);
    expect((await keys.privateJwks()).find((key) => key.kid === first)).toMatchObject({ key_ops: ['verify'] });
    expect(await keys.nextChangeAt()).toBeUndefined();
    await db.destroy();
  });

  it('are apart from the assertion keys: neither set holds a key of the other', async () => {
    // Threat: an ID token passing as an app's assertion, or an assertion as an ID token.
    const db = await memoryDb();
    const assertion = new SigningKeys(db, cipher);
    const rs256 = new SigningKeys(db, cipher, undefined, undefined, 'id-token-rs256');
    const es256 = new SigningKeys(db, cipher, undefined, undefined, 'id-token-es256');
    await Promise.all([assertion.load(), rs256.load(), es256.load()]);
    const kids = (keys: SigningKeys) => new Set(keys.publicJwks().keys.map((key) => key.kid));
    for (const idToken of [rs256, es256]) for (const kid of kids(idToken)) expect(kids(assertion).has(kid)).toBe(false);
    expect(rs256.publicJwks().keys[0]).toMatchObject({ alg: 'RS256', kty: 'RSA' });
    expect(es256.publicJwks().keys[0]).toMatchObject({ alg: 'ES256', kty: 'EC' });
    await db.destroy();
  });
});
