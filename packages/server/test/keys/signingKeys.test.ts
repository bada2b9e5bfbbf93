import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SigningKeys } from '../../src/keys/signingKeys.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
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
