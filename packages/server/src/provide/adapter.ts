import { hkdfSync } from 'node:crypto';
import { compactDecrypt } from 'jose';
import { errors, Provider, type Adapter, type AdapterFactory, type AdapterPayload } from 'oidc-provider';
import { openAesGcm, sealAesGcm } from '../sessions/tokenCipher.js';
import { GRANTABLE_MODELS, type OpStore, type StoredPayload } from './opStore.js';

/**
 * oidc-provider's storage on Gatehouse's database (provide/opStore.ts), on SQLite and PostgreSQL.
 *
 * Use: `adapter: opAdapterFactory(new OpStore(db))` in the Provider's configuration, or, with the
 * clients served from the app catalogue, `opAdapterFactory(store, { clients })` where `clients` is the
 * Adapter oidc-provider asks for the 'Client' model (its `find(clientId)` answers the client's metadata).
 * Without `clients` the factory refuses 'Client'; it always refuses the models of dynamic registration
 * ('RegistrationAccessToken', 'InitialAccessToken'): Gatehouse's clients are its apps, never registered
 * by the clients themselves.
 *
 * What a reader of the database can learn (a backup, a replica, a dump):
 * - No id. The id of a code or token is its bearer secret (so are a Session's, the OP's cookie, and an
 *   Interaction's): only its SHA-256 is stored, and the payload without it (`jti` is put back at find).
 * - No payload, but a Session's. Payloads carry other rows' ids: an Interaction holds its Session's id
 *   (`session.cookie`), its own in `returnTo`, a device code, a pushed request's id (`parJti`). Each
 *   payload is therefore sealed (AES-256-GCM, the model as associated data) under a key derived (HKDF-SHA256) from the row's own
 *   id, which only the bearer has: reading it takes the id. (A Grant's id is no secret, its codes and
 *   tokens name it, and its payload holds none: sealed alike, for one rule.) A Session is the exception,
 *   in the clear without its id: oidc-provider also finds it by `uid` alone (a token's session binding).
 *   A Session found by uid therefore has no `jti` (oidc-provider's constructor gives it a random one);
 *   oidc-provider only reads such a Session, and so must Gatehouse's code: saving it would store a copy.
 * - A DeviceCode is found by its user code too: its id is also sealed under the user code, and the user
 *   code stored hashed. User codes are short by design (typed by people), so a hash of one can be
 *   guessed offline within its few minutes of life; the device flow is not among the flows Gatehouse
 *   offers, and this keeps the storage of it no weaker than the code's own size.
 *
 * Redemption races: oidc-provider redeems a code (and rotates a refresh token) as find, checks, then
 * `consume`, and only checks `consumed` at the find. Here `consume` is a compare-and-set: of two nodes
 * that both found the code unused, the second's consume fails. It fails as oidc-provider fails a code
 * or refresh token it sees used (lib/helpers/grant_source.js, lib/actions/grants/refresh_token.js): the
 * grant's codes, tokens and Grant are revoked (a second redemption means the code leaked), the
 * provider emits 'grant.revoked' (as its own revoke does), and the request gets `invalid_grant`.
 */

export interface OpAdapterOptions {
  /** The adapter oidc-provider asks for its 'Client' model: the app catalogue's clients. */
  clients?: Adapter | undefined;
}

/** oidc-provider's models of dynamic client registration, which Gatehouse does not offer. */
const REGISTRATION_MODELS = new Set(['RegistrationAccessToken', 'InitialAccessToken']);

/** The factory oidc-provider calls once per model (`adapter` in its configuration). */
export function opAdapterFactory(store: OpStore, options: OpAdapterOptions = {}): AdapterFactory {
  return (model: string): Adapter => {
    if (model === 'Client') {
      if (options.clients) return options.clients;
      throw new Error("the OpenID Provider's storage keeps no clients: they come from the app catalogue (opAdapterFactory's `clients`)");
    }
    if (REGISTRATION_MODELS.has(model)) throw new Error(`the OpenID Provider's storage refuses ${model}: dynamic client registration is not offered`);
    return new OpAdapter(store, model);
  };
}

/** How a payload is kept in its column: sealed under its id, or (a Session) in the clear without it. */
interface Envelope {
  /** The payload, AES-256-GCM (sessions/tokenCipher.ts, sealAesGcm). */
  box?: string;
  /** A DeviceCode's id, sealed under its user code (findByUserCode). */
  idBox?: string;
  /** As `box` and `idBox`, as rows written before them keep them: a compact JWE (dir, A256GCM). Read until they expire, never written. */
  sealed?: string;
  idSealed?: string;
  open?: AdapterPayload;
}

const ENCRYPTION = { alg: 'dir', enc: 'A256GCM' } as const;

/** A 256-bit key from a secret the database does not hold, bound to the model and the use. */
function keyFrom(secret: string, model: string, use: 'payload' | 'id'): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, '', `gatehouse op ${use} ${model}`, 32));
}

/** The associated data of a sealed value: what it is, so that a value moved to another model or use fails to open. */
function context(model: string, use: 'payload' | 'id'): string {
  return `gatehouse op ${use} ${model}`;
}

function seal(value: string, secret: string, model: string, use: 'payload' | 'id'): string {
  return sealAesGcm(keyFrom(secret, model, use), value, context(model, use));
}

/** A sealed value opened (undefined when it does not open: it cannot, but for a hash collision, as good as not found). */
async function unseal(envelope: { box?: string | undefined; jwe?: string | undefined }, secret: string, model: string, use: 'payload' | 'id'): Promise<string | undefined> {
  const key = keyFrom(secret, model, use);
  if (envelope.box !== undefined) return openAesGcm(key, envelope.box, context(model, use));
  return envelope.jwe === undefined ? undefined : openJwe(envelope.jwe, key);
}

async function openJwe(jwe: string, key: Uint8Array): Promise<string | undefined> {
  try {
    const { plaintext } = await compactDecrypt(jwe, key, { keyManagementAlgorithms: [ENCRYPTION.alg], contentEncryptionAlgorithms: [ENCRYPTION.enc] });
    return new TextDecoder().decode(plaintext);
  } catch {
    // Not sealed under this id (it cannot be, but for a hash collision): as good as not found.
    return undefined;
  }
}

/** oidc-provider's label for a grant source used twice, per model (its own messages). */
function alreadyUsed(model: string): string {
  switch (model) {
    case 'RefreshToken':
      return 'refresh token already used';
    case 'AuthorizationCode':
      return 'authorization code already consumed';
    case 'DeviceCode':
      return 'device code already consumed';
    case 'BackchannelAuthenticationRequest':
      return 'backchannel authentication request already consumed';
    case 'PreAuthorizedCode':
      return 'pre-authorized code already consumed';
    default:
      return `${model} already consumed`;
  }
}

class OpAdapter implements Adapter {
  constructor(
    private readonly store: OpStore,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // The id is the row's key (hashed) and the sealing key: never kept in the payload.
    const { jti: _id, consumed, ...rest } = payload;
    const lifetime = typeof expiresIn === 'number' ? expiresIn : typeof payload.exp === 'number' ? payload.exp - Math.floor(Date.now() / 1000) : Number.NaN;
    const userCode = typeof payload.userCode === 'string' ? payload.userCode : undefined;
    const envelope: Envelope =
      this.model === 'Session'
        ? { open: rest }
        : {
            box: seal(JSON.stringify(rest), id, this.model, 'payload'),
            ...(userCode === undefined ? {} : { idBox: seal(id, userCode, this.model, 'id') }),
          };
    const row = {
      payload: JSON.stringify(envelope),
      grantId: GRANTABLE_MODELS.has(this.model) && typeof payload.grantId === 'string' ? payload.grantId : undefined,
      uid: this.model === 'Session' && typeof payload.uid === 'string' ? payload.uid : undefined,
      userCode,
      expiresIn: lifetime,
      consumed: Boolean(consumed),
    };
    if (this.model !== 'ReplayDetection') return this.store.savePayload(this.model, id, row);
    // oidc-provider's replay check is find, then save: two nodes given one client assertion at once
    // would both find nothing. The save is the check here: the second is refused. Threat: a captured
    // private_key_jwt assertion replayed to another node within its lifetime. (oidc-provider checks
    // DPoP proofs and client attestations the same way; Gatehouse's clients use neither, and were one
    // to, the loser is still refused, as invalid_client.)
    if (!(await this.store.insertPayloadOnce(this.model, id, row))) {
      throw new errors.InvalidClientAuth('client assertion tokens must only be used once');
    }
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (typeof id !== 'string') return undefined;
    const row = await this.store.findPayload(this.model, id);
    return row && this.open(row, id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (typeof uid !== 'string') return undefined;
    const row = await this.store.findPayloadByUid(this.model, uid);
    // Only a Session is found by uid, and it is in the clear: its id is not known here (see the top).
    return row && this.open(row, undefined);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (typeof userCode !== 'string') return undefined;
    const row = await this.store.findPayloadByUserCode(this.model, userCode);
    if (!row) return undefined;
    const envelope = JSON.parse(row.payload) as Envelope;
    const id = await unseal({ box: envelope.idBox, jwe: envelope.idSealed }, userCode, this.model, 'id');
    return id === undefined ? undefined : this.open(row, id);
  }

  async consume(id: string): Promise<void> {
    const outcome = await this.store.consumePayload(this.model, id);
    if (outcome.won) return;
    // Another request consumed it first (this one found it unused a moment before), or it is gone.
    if (this.model === 'PushedAuthorizationRequest') {
      throw new errors.InvalidRequestUri('request_uri is invalid, expired, or was already used');
    }
    if (outcome.grantId !== null) {
      // Threat: a leaked code or refresh token redeemed by the attacker and the client at once. Its
      // second use revokes the grant, as oidc-provider does when it sees the use (revokeGrantPolicy's
      // default at the token endpoint takes the Grant too).
      await this.store.revokePayloadsOfGrant(outcome.grantId, { withGrant: true });
      const ctx = Provider.ctx;
      ctx?.oidc.provider.emit('grant.revoked', ctx, outcome.grantId);
    }
    throw new errors.InvalidGrant(alreadyUsed(this.model));
  }

  async destroy(id: string): Promise<void> {
    await this.store.destroyPayload(this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.revokePayloadsOfGrant(grantId, { withGrant: false });
  }

  private async open(row: StoredPayload, id: string | undefined): Promise<AdapterPayload | undefined> {
    const envelope = JSON.parse(row.payload) as Envelope;
    let payload: AdapterPayload;
    if (envelope.open !== undefined) {
      payload = envelope.open;
    } else {
      if (id === undefined) return undefined;
      const text = await unseal({ box: envelope.box, jwe: envelope.sealed }, id, this.model, 'payload');
      if (text === undefined) return undefined;
      payload = JSON.parse(text) as AdapterPayload;
    }
    return {
      ...payload,
      ...(id === undefined ? {} : { jti: id }),
      // oidc-provider reads `consumed` as a time in seconds (its memory adapter's epochTime()).
      ...(row.consumedAt === null ? {} : { consumed: Math.floor(row.consumedAt / 1000) }),
    };
  }
}
