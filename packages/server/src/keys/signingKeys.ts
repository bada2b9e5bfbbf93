import { randomUUID } from 'node:crypto';
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
    let row = await activeKey(this.db, this.purpose);
    if (!row) {
      // Nodes starting together on a new database take turns, so that they all make and use one key.
      row = await this.db.transaction().execute(async (trx) => {
        await serializeOn(trx, ['signing-keys']);
        const existing = await activeKey(trx, this.purpose);
        if (existing) return existing;
        await this.create(trx);
        return (await activeKey(trx, this.purpose))!;
      });
    }
    const privateJwk = this.cipher.decrypt(row.private_jwk_enc, context(row.kid));
    if (!privateJwk) throw new Error(`signing key ${row.kid} does not decrypt with the configured encryption keys`);
    this.active = { kid: row.kid, privateKey: (await importJWK(JSON.parse(privateJwk) as JWK, ALGORITHM[this.purpose])) as CryptoKey };
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

  /** Makes a new key the active one; the previous one is retired but stays published for the overlap. */
  async rotate(): Promise<string> {
    const kid = await this.db.transaction().execute(async (trx) => {
      await serializeOn(trx, ['signing-keys']);
      await trx.updateTable('signing_keys').set({ retired_at: this.now() }).where('purpose', '=', this.purpose).where('retired_at', 'is', null).execute();
      return this.create(trx);
    });
    await this.load();
    this.changes?.publish({ type: 'signing-keys-changed' });
    return kid;
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
      .orderBy('retired_at', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy(inCodePointOrder(this.db, 'kid'))
      .execute();
    // The active key (retired_at null) sorts first on both databases only when nulls come first: put it first here.
    const active = this.current().kid;
    rows.sort((a, b) => Number(b.kid === active) - Number(a.kid === active));
    return rows.map((row) => {
      const privateJwk = this.cipher.decrypt(row.private_jwk_enc, context(row.kid));
      if (!privateJwk) throw new Error(`signing key ${row.kid} does not decrypt with the configured encryption keys`);
      return { ...(JSON.parse(privateJwk) as JWK), kid: row.kid, alg: row.alg, use: 'sig' };
    });
  }

  private async create(db: Db): Promise<string> {
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
        created_at: this.now(),
        retired_at: null,
      })
      .execute();
    return kid;
  }
}

function activeKey(db: Db, purpose: KeyPurpose) {
  // One key of a purpose is active at a time (made under a lock); the kid only makes the order total.
  return db.selectFrom('signing_keys').selectAll().where('purpose', '=', purpose).where('retired_at', 'is', null).orderBy('created_at', 'desc').orderBy(inCodePointOrder(db, 'kid')).executeTakeFirst();
}

function context(kid: string): string {
  return `gatehouse/signing-key/${kid}`;
}
