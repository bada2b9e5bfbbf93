import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csrfToken, isSameOrigin } from '../src/sessions/csrf.js';
import { hashSecret, isWellFormedSecret, newPublicId, newSecret } from '../src/sessions/sessionToken.js';
import { SessionStore } from '../src/sessions/sessionStore.js';
import { createTokenCipher } from '../src/sessions/tokenCipher.js';
import { migrateToLatest } from '../src/storage/migrate.js';
import type { Database } from '../src/storage/schema.js';

const key = Buffer.alloc(32, 7);
const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', key]]), currentKeyId: 'k1' });

describe('session secrets', () => {
  it('are 256 random bits, base64url, and never equal to their hash or public id', () => {
    const secrets = new Set(Array.from({ length: 1000 }, newSecret));
    expect(secrets.size).toBe(1000);
    const secret = newSecret();
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(isWellFormedSecret(secret)).toBe(true);
    expect(hashSecret(secret)).not.toBe(secret);
    expect(hashSecret(secret)).toBe(hashSecret(secret));
    expect(Buffer.from(newPublicId(), 'base64url')).toHaveLength(16);
  });

  it('rejects malformed cookie values before any lookup', () => {
    for (const value of [undefined, '', 'short', `${newSecret()}x`, `${newSecret().slice(1)}=`, "' OR 1=1 --"]) {
      expect(isWellFormedSecret(value)).toBe(false);
    }
  });
});

describe('token cipher', () => {
  it('round-trips and binds ciphertexts to their context (session + purpose)', () => {
    const sealed = cipher.encrypt('refresh-token-value', 'session/a/refresh_token');
    expect(sealed).toMatch(/^v1\.k1\./);
    expect(sealed).not.toContain('refresh-token-value');
    expect(cipher.decrypt(sealed, 'session/a/refresh_token')).toBe('refresh-token-value');
    // Threat: a ciphertext copied into another session's row must not decrypt there.
    expect(cipher.decrypt(sealed, 'session/b/refresh_token')).toBeUndefined();
    expect(cipher.decrypt(sealed, 'session/a/id_token')).toBeUndefined();
  });

  it('refuses tampering and unknown keys, and decrypts with older keys after rotation', () => {
    const sealed = cipher.encrypt('x', 'c');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0]! ^= 1;
    expect(cipher.decrypt([...parts.slice(0, 3), body.toString('base64url')].join('.'), 'c')).toBeUndefined();
    expect(cipher.decrypt(sealed.replace('.k1.', '.k9.'), 'c')).toBeUndefined();
    expect(cipher.decrypt('garbage', 'c')).toBeUndefined();
    const rotated = createTokenCipher({
      encryptionKeys: new Map([['k2', Buffer.alloc(32, 9)], ['k1', key]]),
      currentKeyId: 'k2',
    });
    expect(rotated.decrypt(sealed, 'c')).toBe('x');
    expect(rotated.encrypt('y', 'c')).toMatch(/^v1\.k2\./);
  });
});

describe('session store', () => {
  let db: Kysely<Database>;
  let now = 1_700_000_000_000;
  let store: SessionStore;
  const timeouts = { idleTimeout: 60_000, absoluteLifetime: 300_000, touchInterval: 10_000 };

  beforeEach(async () => {
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    await migrateToLatest(db);
    await db
      .insertInto('users')
      .values({ id: 'u1', email: 'a@example.com', name: 'A', picture: null, status: 'active', roles: '[]', primary_identity_id: null, created_at: now, updated_at: now, last_sign_in_at: null })
      .execute();
    store = new SessionStore(db, cipher, timeouts, () => now);
  });
  afterEach(() => db.destroy());

  const create = () => store.create({ userId: 'u1', identityId: 'i1', providerId: 'dev', idToken: 'id.token.value', refreshToken: 'refresh-value' });

  it('stores only the hash of the secret and encrypted tokens', async () => {
    const { secret, session } = await create();
    const row = await db.selectFrom('sessions').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain('refresh-value');
    expect(JSON.stringify(row)).not.toContain('id.token.value');
    expect(row.secret_hash).toBe(hashSecret(secret));
    expect(session.id).not.toBe(secret);
    expect(store.idToken(row)).toBe('id.token.value');
    expect(store.refreshToken(row)).toBe('refresh-value');
  });

  it('finds a session by its secret only', async () => {
    const { secret, session } = await create();
    expect((await store.findActive(secret))?.id).toBe(session.id);
    expect(await store.findActive(session.id)).toBeUndefined();
    expect(await store.findActive(session.secret_hash)).toBeUndefined();
    expect(await store.findActive(newSecret())).toBeUndefined();
  });

  it('rotation: a new sign-in yields a new secret and the revoked one is dead', async () => {
    const first = await create();
    await store.revoke(first.session.id, 'rotated');
    const second = await create();
    expect(second.secret).not.toBe(first.secret);
    expect(second.session.id).not.toBe(first.session.id);
    expect(await store.findActive(first.secret)).toBeUndefined();
    expect((await store.findActive(second.secret))?.id).toBe(second.session.id);
    const revoked = await store.findById(first.session.id);
    expect(revoked?.revoked_reason).toBe('rotated');
    expect(revoked?.refresh_token_enc).toBeNull();
  });

  it('expires after the idle timeout, slides on throttled touches, and never outlives the absolute lifetime', async () => {
    const { secret } = await create();
    now += 5_000;
    let session = (await store.findActive(secret))!;
    session = await store.touch(session);
    expect(session.last_seen_at).toBe(now - 5_000); // throttled: no write within touchInterval
    now += 50_000;
    session = await store.touch((await store.findActive(secret))!);
    expect(session.idle_expires_at).toBe(now + 60_000);
    for (let i = 0; i < 10; i++) {
      now += 50_000;
      const active = await store.findActive(secret);
      if (!active) break;
      await store.touch(active);
    }
    expect(now).toBeLessThanOrEqual(1_700_000_000_000 + 300_000 + 50_000);
    expect(await store.findActive(secret)).toBeUndefined();
  });

  it('idle expiry ends a session nobody uses', async () => {
    const { secret } = await create();
    now += 60_000;
    expect(await store.findActive(secret)).toBeUndefined();
  });

  it('CSRF tokens are bound to the session and the key', async () => {
    const a = await create();
    const b = await create();
    expect(csrfToken(key, a.session)).toBe(csrfToken(key, a.session));
    expect(csrfToken(key, a.session)).not.toBe(csrfToken(key, b.session));
    expect(csrfToken(Buffer.alloc(32, 1), a.session)).not.toBe(csrfToken(key, a.session));
  });
});

describe('same-origin check', () => {
  const request = (headers: Record<string, string>) => ({ headers }) as unknown as Parameters<typeof isSameOrigin>[0];
  it.each<[Record<string, string>, boolean]>([
    [{ origin: 'http://localhost:4180' }, true],
    [{ origin: 'http://localhost:4181' }, false],
    [{ origin: 'http://localhost:4180', 'sec-fetch-site': 'same-site' }, true],
    [{ 'sec-fetch-site': 'same-origin' }, true],
    [{ 'sec-fetch-site': 'same-site' }, false],
    [{}, false],
    // A no-referrer page's POST carries Origin: null; only Fetch Metadata can vouch for it then.
    [{ origin: 'null', 'sec-fetch-site': 'same-origin' }, true],
    [{ origin: 'null', 'sec-fetch-site': 'cross-site' }, false],
    [{ origin: 'null' }, false],
  ])('%j → %s', (headers, expected) => {
    expect(isSameOrigin(request(headers), 'http://localhost:4180')).toBe(expected);
  });
});
