import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { clientSecretDigest, type AppRegistry } from './appRegistry.js';
import { clientSecretsKey } from './appStore.js';
import { AppError } from '../errors.js';
import type { Db } from '../storage/database.js';
import { serializeOn } from '../storage/dialect.js';

/** Live secrets an app may have at once: the current one and the next, while the app is moved to it. */
export const MAX_LIVE_CLIENT_SECRETS = 2;

/** Bytes of randomness in a generated secret: 256 bits, as a 43-character base64url string. */
const SECRET_BYTES = 32;

/** How many characters of a secret the console shows to tell two apart: far too few to guess the rest. */
const HINT_LENGTH = 4;

/** The longest secret worth hashing: longer than any Gatehouse makes or a config file may hold (512). */
const MAX_PRESENTED_LENGTH = 512;

/** A client secret as the console lists it: never the secret, never its hash. */
export interface ClientSecretView {
  id: string;
  /** The secret's first characters, to tell it from the other one. */
  hint: string;
  createdAt: number;
  /** The admin who created it (a user id), when known. */
  createdBy: string | null;
}

/** Whether an app authenticates at the token endpoint with a secret at all. */
export function usesClientSecret(app: { oidc?: { authentication: string } | undefined }): boolean {
  return app.oidc?.authentication === 'client_secret_basic' || app.oidc?.authentication === 'client_secret_post';
}

/**
 * The client secrets of the apps that sign people in with OpenID Connect (`op_client_secrets`).
 *
 * A console app's secrets are made here: 256 random bits, shown once in the answer that creates them,
 * kept as their SHA-256 digest with a four-character hint, at most two live at a time (rotation: the
 * app is given the new one while the old still works, then the old is revoked). A config app's come from
 * gatehouse.yaml and are hashed by the registry as the file is put in force; they are changed there.
 *
 * `verify` is what the OpenID Provider asks at the token endpoint.
 */
export class ClientSecretStore {
  constructor(
    private readonly db: Db,
    private readonly registry: Pick<AppRegistry, 'get' | 'source' | 'configSecrets'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether `presented` is one of the app's live secrets: the config file's for a config app, the
   * console's for a console app (never the other's: a config app that takes the id of a console app
   * deleted or shadowed does not inherit its secrets). False for an app that does not authenticate
   * with a secret. Every stored digest is compared, each in constant time (equal-length SHA-256
   * digests through timingSafeEqual), so the answer's timing tells nothing of how close a guess came.
   */
  async verify(appId: string, presented: unknown): Promise<boolean> {
    const app = this.registry.get(appId);
    if (!app || !usesClientSecret(app)) return false;
    if (typeof presented !== 'string' || presented.length === 0 || presented.length > MAX_PRESENTED_LENGTH) return false;
    const digest = clientSecretDigest(presented);
    const stored = this.registry.source(appId) === 'config' ? this.registry.configSecrets(appId) : await this.liveDigests(appId);
    let match = false;
    for (const candidate of stored) {
      if (candidate.length === digest.length && timingSafeEqual(candidate, digest)) match = true;
    }
    return match;
  }

  /** The app's live secrets, oldest first. */
  async list(appId: string): Promise<ClientSecretView[]> {
    this.consoleClient(appId, { forCreating: false });
    const rows = await this.db
      .selectFrom('op_client_secrets')
      .select(['id', 'hint', 'created_at', 'created_by'])
      .where('app_id', '=', appId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(view);
  }

  /**
   * A new secret for a console app: the secret itself is in this answer and nowhere else ever again.
   * Refused (`client_secret_limit`) while the app has two live ones.
   */
  async create(appId: string, createdBy: string | null): Promise<{ secret: string; view: ClientSecretView }> {
    this.consoleClient(appId, { forCreating: true });
    const secret = randomBytes(SECRET_BYTES).toString('base64url');
    const row = { id: randomUUID(), app_id: appId, secret_hash: clientSecretDigest(secret).toString('hex'), hint: secret.slice(0, HINT_LENGTH), created_at: this.now(), created_by: createdBy, revoked_at: null };
    await this.db.transaction().execute(async (trx) => {
      // One at a time per app, across nodes (two creates at once would both count one live secret and
      // make three), and after a deletion of the app has finished or before it starts (AppStore.remove).
      await serializeOn(trx, [clientSecretsKey(appId)]);
      const app = await trx.selectFrom('apps').select('id').where('id', '=', appId).executeTakeFirst();
      if (!app) throw new AppError('not_found');
      const live = await trx.selectFrom('op_client_secrets').select((eb) => eb.fn.countAll<number>().as('count')).where('app_id', '=', appId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
      if (Number(live.count) >= MAX_LIVE_CLIENT_SECRETS) throw new AppError('client_secret_limit');
      await trx.insertInto('op_client_secrets').values(row).execute();
    });
    return { secret, view: view(row) };
  }

  /** Revokes one of a console app's live secrets: from now on it authenticates nothing. */
  async revoke(appId: string, secretId: string): Promise<ClientSecretView> {
    this.consoleClient(appId, { forCreating: false });
    const revoked = await this.db
      .updateTable('op_client_secrets')
      .set({ revoked_at: this.now() })
      .where('id', '=', secretId)
      .where('app_id', '=', appId)
      .where('revoked_at', 'is', null)
      .returning(['id', 'hint', 'created_at', 'created_by'])
      .executeTakeFirst();
    if (!revoked) throw new AppError('not_found');
    return view(revoked);
  }

  private async liveDigests(appId: string): Promise<Buffer[]> {
    const rows = await this.db.selectFrom('op_client_secrets').select('secret_hash').where('app_id', '=', appId).where('revoked_at', 'is', null).execute();
    return rows.map((row) => Buffer.from(row.secret_hash, 'hex'));
  }

  /** The console app whose secrets these are; a config app's are in the file, and an app without a secret has none to make. */
  private consoleClient(appId: string, { forCreating }: { forCreating: boolean }): void {
    const app = this.registry.get(appId);
    if (!app) throw new AppError('not_found');
    if (this.registry.source(appId) === 'config') throw new AppError('app_from_config');
    if (forCreating && !usesClientSecret(app)) {
      const how = app.oidc ? `authenticates with ${app.oidc.authentication}` : 'does not sign people in with OpenID Connect';
      throw new AppError('bad_request', { params: { reason: `this app ${how}: it has no client secret` } });
    }
  }
}

function view(row: { id: string; hint: string; created_at: number; created_by: string | null }): ClientSecretView {
  return { id: row.id, hint: row.hint, createdAt: Number(row.created_at), createdBy: row.created_by };
}
