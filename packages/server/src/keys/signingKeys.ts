import { createPrivateKey, randomUUID, type JsonWebKey as NodeJsonWebKey, type KeyObject } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { ChangeFeed } from '../events/changes.js';
import type { Db } from '../storage/database.js';
import { inCodePointOrder, serializeOn } from '../storage/dialect.js';

export const ASSERTION_ALG = 'ES256';

/**
 * What a key signs. Each purpose has keys of its own, rotated on their own and published on their own:
 * a key never signs for another purpose, so a token of one kind cannot pass as the other. The
 * assertion apps receive (published at /.gatehouse/jwks.json), and the OpenID Provider's ID tokens in
 * RS256 (OpenID Connect Discovery requires it) and ES256 (published at the OP's own /oidc/jwks only):
 * an ID token never verifies as an assertion, nor an assertion as an ID token.
 */
export type KeyPurpose = 'assertion' | 'id-token-rs256' | 'id-token-es256';
const ALGORITHM: Record<KeyPurpose, string> = { assertion: ASSERTION_ALG, 'id-token-rs256': 'RS256', 'id-token-es256': 'ES256' };
/**
 * How long an ID token key is published before it signs: relying parties cache the OP's key set (an
 * hour is the longest common default, e.g. mod_auth_openidc's OIDCJWKSRefreshInterval), and most fetch
 * it again on an unknown kid; an hour after a rotation every one of them has the new key.
 */
export const NEXT_ID_TOKEN_KEY_DELAY = 3_600_000;
/** The purposes of the OpenID Provider's ID token keys. */
export const ID_TOKEN_KEY_PURPOSES = ['id-token-rs256', 'id-token-es256'] as const satisfies readonly KeyPurpose[];
/** A retired key stays published this long, so assertions signed just before a rotation still verify. */
export const RETIRED_KEY_OVERLAP_MS = 24 * 3_600_000;

/**
 * What seals the private halves at rest: the server's encryption keys (sessions/tokenCipher.ts, handed
 * in by the composition root), taken as an interface so this area stays below sessions/. A sealed key
 * is bound to its kid (the context), so a row's ciphertext copied into another row does not open.
 */
export interface KeyCipher {
  encrypt(plaintext: string, context: string): string;
  /** Undefined for anything that does not decrypt. */
  decrypt(sealed: string, context: string): string | undefined;
}

export interface ActiveKey {
  kid: string;
  privateKey: CryptoKey;
  /** The same private key for node:crypto's synchronous signing (authorize/assertion.ts). */
  privateKeyObject: KeyObject;
}

/**
 * The keys of one purpose (by default the ES256 keys that sign identity assertions). They live in the
 * database (private halves encrypted), so every node signs with the same key and restarts keep it.
 * Rotation adds a new active key and keeps the old one published for an overlap period.
 */
export class SigningKeys {
  private active: ActiveKey | undefined;
  private jwks: { keys: JWK[] } | undefined;

  constructor(
    private readonly db: Db,
    private readonly cipher: KeyCipher,
    private readonly now: () => number = Date.now,
    /** Told of a rotation, for the other workers and nodes (they load the keys again). */
    private readonly changes?: Pick<ChangeFeed, 'publish'>,
    /** The keys this instance loads, rotates and publishes: only those of this purpose. */
    readonly purpose: KeyPurpose = 'assertion',
  ) {}

  /** Loads the active key, creating the first one if there is none. */
  async load(): Promise<void> {
    let row = await activeKey(this.db, this.purpose, this.now());
    if (!row) {
      // Nodes starting together on a new database take turns, so that they all make and use one key.
      row = await this.db.transaction().execute(async (trx) => {
        await serializeOn(trx, ['signing-keys']);
        const existing = await activeKey(trx, this.purpose, this.now());
        if (existing) return existing;
        await this.create(trx);
        return (await activeKey(trx, this.purpose, this.now()))!;
      });
    }
    const privateJwk = this.cipher.decrypt(row.private_jwk_enc, context(row.kid));
    if (!privateJwk) throw new Error(`signing key ${row.kid} does not decrypt with the configured encryption keys`);
    const jwk = JSON.parse(privateJwk) as JWK;
    this.active = {
      kid: row.kid,
      privateKey: (await importJWK(jwk, ALGORITHM[this.purpose])) as CryptoKey,
      privateKeyObject: createPrivateKey({ key: jwk as NodeJsonWebKey, format: 'jwk' }),
    };
    const published = await this.db
      .selectFrom('signing_keys')
      .select(['public_jwk'])
      .where('purpose', '=', this.purpose)
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', this.now() - RETIRED_KEY_OVERLAP_MS)]))
      .orderBy('created_at', 'desc')
      .orderBy(inCodePointOrder(this.db, 'kid'))
      .execute();
    this.jwks = { keys: published.map((key) => JSON.parse(key.public_jwk) as JWK) };
  }

  /**
   * Makes a new key the active one; the previous one is retired but stays published for the overlap.
   * With `after`, the new key is the next one: published at once and signing only from `after`
   * milliseconds on, when the current one retires (its `created_at` and the old key's `retired_at` are
   * that moment). Verifiers that cache the key set (OpenID Connect relying parties) have it before the
   * first token it signs; every worker and node switches at that moment on its own clock
   * (`nextChangeAt`), with nothing to hear.
   */
  async rotate(after = 0): Promise<string> {
    const kid = await this.db.transaction().execute(async (trx) => {
      await serializeOn(trx, ['signing-keys']);
      const at = this.now() + after;
      const pending = await trx.selectFrom('signing_keys').select('kid').where('purpose', '=', this.purpose).where('created_at', '>', this.now()).executeTakeFirst();
      if (pending) throw new Error(`a next ${this.purpose} key (${pending.kid}) is already waiting to sign: rotate again once it does`);
      await trx.updateTable('signing_keys').set({ retired_at: at }).where('purpose', '=', this.purpose).where('retired_at', 'is', null).execute();
      return this.create(trx, at);
    });
    await this.load();
    this.changes?.publish({ type: 'signing-keys-changed' });
    return kid;
  }

  /** When a key of this purpose starts or stops signing next, if one is waiting to: the time to load again. */
  async nextChangeAt(): Promise<number | undefined> {
    const now = this.now();
    const row = await this.db
      .selectFrom('signing_keys')
      .select((eb) => eb.fn.min('created_at').as('at'))
      .where('purpose', '=', this.purpose)
      .where('created_at', '>', now)
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  current(): ActiveKey {
    if (!this.active) throw new Error('signing keys not loaded');
    return this.active;
  }

  publicJwks(): { keys: JWK[] } {
    if (!this.jwks) throw new Error('signing keys not loaded');
    return this.jwks;
  }

  /**
   * The private halves of this purpose's published keys, the active one first, each with its kid, alg
   * and use: what a signer that takes JWKs is built with (the OpenID Provider, provide/keys.ts). The
   * retired ones still published are there so that the set it publishes is the same as this one's.
   */
  async privateJwks(): Promise<JWK[]> {
    const rows = await this.db
      .selectFrom('signing_keys')
      .select(['kid', 'alg', 'private_jwk_enc'])
      .where('purpose', '=', this.purpose)
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', this.now() - RETIRED_KEY_OVERLAP_MS)]))
      .orderBy('created_at', 'desc')
      .orderBy(inCodePointOrder(this.db, 'kid'))
      .execute();
    // The active key first: a signer that takes the first key of an algorithm takes it.
    const active = this.current().kid;
    rows.sort((a, b) => Number(b.kid === active) - Number(a.kid === active));
    return rows.map((row) => {
      const privateJwk = this.cipher.decrypt(row.private_jwk_enc, context(row.kid));
      if (!privateJwk) throw new Error(`signing key ${row.kid} does not decrypt with the configured encryption keys`);
      // Only the active key may sign: the next one and the retired ones are there to be published.
      return { ...(JSON.parse(privateJwk) as JWK), kid: row.kid, alg: row.alg, use: 'sig', ...(row.kid === active ? {} : { key_ops: ['verify'] }) };
    });
  }

  private async create(db: Db, at = this.now()): Promise<string> {
    const kid = randomUUID();
    const alg = ALGORITHM[this.purpose];
    // RSA keys of 2048 bits: what RS256 verifiers everywhere take (jose's default).
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    const privateJwk = await exportJWK(privateKey);
    await db
      .insertInto('signing_keys')
      .values({
        kid,
        purpose: this.purpose,
        alg,
        public_jwk: JSON.stringify(publicJwk),
        private_jwk_enc: this.cipher.encrypt(JSON.stringify(privateJwk), context(kid)),
        created_at: at,
        retired_at: null,
      })
      .execute();
    return kid;
  }
}

function activeKey(db: Db, purpose: KeyPurpose, now: number) {
  // One key of a purpose is active at a time (made under a lock): begun, and not retired yet (a key
  // retires at the moment its next one begins). The kid only makes the order total.
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('purpose', '=', purpose)
    .where('created_at', '<=', now)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy(inCodePointOrder(db, 'kid'))
    .executeTakeFirst();
}

function context(kid: string): string {
  return `gatehouse/signing-key/${kid}`;
}
