import { formatIssues, githubDefinition, type DiscoveryPreview } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { AccountStore } from '../accounts/accountStore.js';
import { fromDiscoveryError, previewDiscovery } from './discoveryPreview.js';
import { connect } from './kinds/index.js';
import { clientAssertionKey } from './oidcClient.js';
import type { ProviderRegistry } from './providerRegistry.js';
import { providerSchema, testOnlySettings, type ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { TokenCipher } from '../sessions/tokenCipher.js';
import type { ChangeFeed } from '../events/changes.js';
import type { Db } from '../storage/database.js';
import { inCodePointOrder } from '../storage/dialect.js';

/** A definition the console cannot accept, with the path of each bad field ("issuer: must be https …"). */
export class ProviderValidationError extends AppError {
  constructor(readonly problems: string[]) {
    super('bad_request', { params: { reason: problems.join('; ') } });
  }
}

/** Which credentials a change replaced (the audit log says so without ever showing them). */
export interface ReplacedCredentials {
  clientSecret: boolean;
  privateKey: boolean;
}

type Credential = 'client-secret' | 'private-key';

/** How a console provider came to be offered (the 0009 migration); an unknown value reads as `existing`. */
function publishedHow(value: string | null): 'test' | 'admin' | 'existing' {
  return value === 'test' || value === 'admin' ? value : 'existing';
}

/**
 * The associated data a credential is sealed with: a ciphertext copied to another provider's row, or
 * from one column to the other, does not decrypt.
 */
export function credentialContext(providerId: string, credential: Credential): string {
  return `provider:${providerId}:${credential}`;
}

/**
 * Identity providers created in the admin console: validated exactly like `providers:` in the config
 * file (the same zod schema) plus the rules of the whole set (ids unique across config and console;
 * the id is fixed, since the redirect URI registered at the IdP contains it). The client secret or
 * private key is encrypted at rest with the token cipher and never leaves this store except into the
 * registry. Every change is loaded into the registry at once.
 */
export class ProviderStore {
  constructor(
    private readonly deps: {
      db: Db;
      registry: ProviderRegistry;
      cipher: TokenCipher;
      accounts: AccountStore;
      log: FastifyBaseLogger;
      /** Told of every change, for the other workers and nodes (they load the providers again). */
      changes?: Pick<ChangeFeed, 'publish'>;
      /** Production mode: settings for tests only are refused (config/providers/trust.ts). */
      production?: boolean;
    },
    /** Fetches the issuer's discovery document (replaced in unit tests). */
    private readonly checkIssuer: (issuer: string) => Promise<DiscoveryPreview> = previewDiscovery,
    private readonly now: () => number = Date.now,
    /** Prepares a preset's provider with its kind's own runtime, as the registry will (replaced in unit tests). */
    private readonly prepare: (provider: ProviderConfig) => Promise<unknown> = connect,
  ) {}

  /** Loads the stored providers into the registry (at start, and after every change). */
  async load(): Promise<ProviderConfig[]> {
    const { db, cipher, registry, log } = this.deps;
    // Oldest first, then by id: one order on every node and database (the console lists them so).
    const rows = await db.selectFrom('providers').selectAll().orderBy('created_at').orderBy(inCodePointOrder(db, 'id')).execute();
    const publications = new Map(
      rows.map((row) => [row.id, row.published_at === null ? null : { at: Number(row.published_at), how: publishedHow(row.published_how) }] as const),
    );
    const providers = rows.flatMap((row) => {
      const clientSecret = row.client_secret_enc ? cipher.decrypt(row.client_secret_enc, credentialContext(row.id, 'client-secret')) : undefined;
      const privateKey = row.private_key_enc ? cipher.decrypt(row.private_key_enc, credentialContext(row.id, 'private-key')) : undefined;
      if ((row.client_secret_enc && clientSecret === undefined) || (row.private_key_enc && privateKey === undefined)) {
        log.error({ provider: row.id }, 'console provider left out: its credential does not decrypt (was an encryption key removed?)');
        return [];
      }
      const parsed = providerSchema.safeParse({
        ...(JSON.parse(row.definition) as object),
        ...(clientSecret !== undefined ? { clientSecret } : {}),
        ...(privateKey !== undefined ? { privateKey: JSON.parse(privateKey) as unknown } : {}),
      });
      // A stored definition that no longer validates is left out (fail closed), never half-applied.
      if (!parsed.success || parsed.data.id !== row.id) {
        log.error({ provider: row.id, problems: parsed.success ? ['id'] : formatIssues(parsed.error.issues) }, 'console provider left out: its definition is invalid');
        return [];
      }
      return [parsed.data];
    });
    registry.setConsoleProviders(providers, publications);
    return providers;
  }

  /**
   * Offers a hidden console provider from now on: because a test sign-in with it passed (`test`), or
   * because an admin chose to untested (`admin`). True when this published it, false when it already was.
   */
  async publish(id: string, how: 'test' | 'admin'): Promise<boolean> {
    this.consoleProvider(id);
    const updated = await this.deps.db
      .updateTable('providers')
      .set({ published_at: this.now(), published_how: how })
      .where('id', '=', id)
      .where('published_at', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    await this.load();
    this.deps.changes?.publish({ type: 'providers-changed' });
    return true;
  }

  async create(input: unknown): Promise<ProviderConfig> {
    const { provider } = await this.validate(input, undefined);
    const now = this.now();
    // Checked against the registry in validate(), and again by the database: two creates of one id at
    // once (two admins, two nodes) both pass the first check, and the second gets the answer a later one gets.
    const inserted = await this.deps.db
      .insertInto('providers')
      // Hidden until a test sign-in with it passed, or an admin publishes it knowingly.
      .values({ id: provider.id, ...this.sealed(provider), created_at: now, updated_at: now, published_at: null, published_how: null })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw idTaken(provider.id, false);
    await this.load();
    this.deps.changes?.publish({ type: 'providers-changed' });
    return provider;
  }

  /** Replaces a definition; a credential left out is kept, and the on/off state is changed only by `setEnabled`. */
  async update(id: string, input: unknown): Promise<{ before: ProviderConfig; after: ProviderConfig; replaced: ReplacedCredentials }> {
    const before = this.consoleProvider(id);
    const { provider: after, replaced } = await this.validate(input, before);
    await this.deps.db.updateTable('providers').set({ ...this.sealed(after), updated_at: this.now() }).where('id', '=', id).execute();
    await this.load();
    this.deps.changes?.publish({ type: 'providers-changed' });
    return { before, after, replaced };
  }

  async setEnabled(id: string, enabled: boolean): Promise<{ before: ProviderConfig; after: ProviderConfig }> {
    const before = this.consoleProvider(id);
    const after = { ...before, enabled };
    await this.deps.db.updateTable('providers').set({ definition: definitionOf(after), updated_at: this.now() }).where('id', '=', id).execute();
    await this.load();
    this.deps.changes?.publish({ type: 'providers-changed' });
    return { before, after };
  }

  /** Deletes a provider nobody has signed in with (one with linked identities is turned off instead). */
  async remove(id: string): Promise<ProviderConfig> {
    const before = this.consoleProvider(id);
    if ((await this.linkedIdentities(id)) > 0) throw new AppError('provider_in_use', { params: { provider: before.name } });
    await this.deps.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('providers').where('id', '=', id).execute();
      // A later provider with this id is another IdP: nothing of this one's may count for it.
      await trx.deleteFrom('sign_in_attempts').where('provider_id', '=', id).execute();
      await trx.deleteFrom('logout_token_jtis').where('provider_id', '=', id).execute();
    });
    await this.load();
    this.deps.changes?.publish({ type: 'providers-changed' });
    return before;
  }

  private async linkedIdentities(id: string): Promise<number> {
    return (await this.deps.accounts.identityCounts()).get(id) ?? 0;
  }

  private consoleProvider(id: string): ProviderConfig {
    const provider = this.deps.registry.find(id);
    if (!provider) throw new AppError('not_found');
    if (this.deps.registry.source(id) === 'config') throw new AppError('provider_from_config');
    return provider;
  }

  private sealed(provider: ProviderConfig) {
    const { cipher } = this.deps;
    return {
      definition: definitionOf(provider),
      client_secret_enc: provider.clientSecret ? cipher.encrypt(provider.clientSecret, credentialContext(provider.id, 'client-secret')) : null,
      private_key_enc: provider.privateKey ? cipher.encrypt(JSON.stringify(provider.privateKey), credentialContext(provider.id, 'private-key')) : null,
    };
  }

  private async validate(input: unknown, current: ProviderConfig | undefined): Promise<{ provider: ProviderConfig; replaced: ReplacedCredentials }> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ProviderValidationError(['(root): must be a provider definition']);
    const given: Record<string, unknown> = { ...input };
    const problems: string[] = [];
    if (given.clientSecret === '') problems.push('clientSecret: must not be empty (leave it out to keep the current secret)');
    const replaced = { clientSecret: Boolean(current) && typeof given.clientSecret === 'string', privateKey: Boolean(current) && typeof given.privateKey === 'object' && given.privateKey !== null };
    if (current) {
      if (given.id !== undefined && given.id !== current.id) problems.push('id: cannot change (the redirect URI registered at the IdP contains it)');
      if (given.enabled !== undefined) problems.push('enabled: turn a provider on or off with …/enable or …/disable');
      given.id = current.id;
      given.enabled = current.enabled;
      // Only a credential there is (a key set to undefined would still be a key GitHub's schema refuses).
      if (given.clientSecret === undefined && current.clientSecret !== undefined) given.clientSecret = current.clientSecret;
      if (given.privateKey === undefined && current.privateKey !== undefined) given.privateKey = current.privateKey;
    }
    if (problems.length > 0) throw new ProviderValidationError(problems);
    const parsed = providerSchema.safeParse(given);
    if (!parsed.success) throw new ProviderValidationError(formatIssues(parsed.error.issues));
    const provider = withOneCredential(parsed.data);
    // A stand-in IdP on loopback is for tests: never in production, from the console as from the file.
    if (this.deps.production) {
      const testOnly = testOnlySettings(provider);
      if (testOnly.length > 0) throw new ProviderValidationError(testOnly.map(({ field, message }) => `${field}: ${message}`));
    }

    if (!current && this.deps.registry.find(provider.id)) throw idTaken(provider.id, this.deps.registry.source(provider.id) === 'config');
    if (provider.privateKey) {
      try {
        await clientAssertionKey(provider.privateKey);
      } catch {
        throw new ProviderValidationError(['privateKey: is not a usable private key (a private RSA, EC or OKP JWK)']);
      }
    }
    if (!current || current.issuer !== provider.issuer) {
      // Identities are (provider, subject): another issuer's subjects would sign into these accounts.
      if (current && (await this.linkedIdentities(current.id)) > 0) throw new AppError('provider_in_use', { params: { provider: current.name } });
      await this.checkReachable(provider);
    }
    return { provider, replaced };
  }

  /**
   * A provider is saved only once it answers as it will be used. The generic kind: its issuer answers
   * as an OpenID Connect issuer that can do PKCE. A preset: prepared by its kind's own runtime, with its
   * quirks (Entra's `{tenantid}` issuer template, ...); GitHub has no discovery, so nothing is fetched
   * and the console's Test sign-in is its check.
   */
  private async checkReachable(provider: ProviderConfig): Promise<void> {
    if (provider.kind === 'oidc') {
      const preview = await this.checkIssuer(provider.issuer);
      if (preview.pkce === 'unsupported') throw new AppError('pkce_unsupported', { params: { issuer: provider.issuer } });
      return;
    }
    await this.prepare(provider).catch((error: unknown) => {
      throw error instanceof AppError ? error : fromDiscoveryError(error, provider.issuer);
    });
  }
}

/** Only the credential the client authentication method uses is kept (switching methods drops the other). */
function withOneCredential(provider: ProviderConfig): ProviderConfig {
  const { clientSecret, privateKey, ...rest } = provider;
  return provider.clientAuthMethod === 'private_key_jwt' ? { ...rest, privateKey } : { ...rest, clientSecret };
}

/** The stored definition: everything but the credential, which is kept apart and encrypted. */
function definitionOf(provider: ProviderConfig): string {
  const { clientSecret: _secret, privateKey: _key, ...definition } = provider;
  return JSON.stringify(definition.kind === 'github' ? githubDefinition(definition) : definition);
}

/** An id another provider has (in the console or the configuration file): 409 `conflict`, beside the id field. */
function idTaken(id: string, fromConfig: boolean): AppError {
  const reason = `${fromConfig ? 'A provider in the configuration file' : 'Another provider'} already has the id "${id}"`;
  return new AppError('conflict', { params: { reason }, field: 'id' });
}
