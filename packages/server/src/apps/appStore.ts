import { appSchema, formatIssues } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import { clientIdOf, type AppRegistry } from './appRegistry.js';
import { appSetIssues } from '../config/appSetIssues.js';
import type { AppConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { ChangeFeed } from '../events/changes.js';
import type { Db } from '../storage/database.js';
import { inCodePointOrder, isUniqueViolation, serializeOn } from '../storage/dialect.js';

/** A definition the console cannot accept, with the path of each bad field ("policy.allow[0]: …"). */
export class AppValidationError extends AppError {
  constructor(readonly problems: string[]) {
    super('bad_request', { params: { reason: problems.join('; ') } });
  }
}

/** The host an app is found by (the registry's key, and the database's unique `host`). */
function hostOf(app: AppConfig): string {
  return new URL(app.publicUrl).host;
}

/**
 * The host the database keeps unique for an app: none for an app Gatehouse does not guard (OpenID
 * Connect alone), which answers on no host of Gatehouse's and may share its host (a null is equal to
 * no other value in a unique index, on SQLite and PostgreSQL alike).
 */
function storedHostOf(app: AppConfig): string | null {
  return app.guard ? hostOf(app) : null;
}

/**
 * A definition as stored: the schema's output, read back through the same schema at every load. A
 * duration there is milliseconds, which the schema would read again as seconds (a bare number is
 * seconds in gatehouse.yaml): so it is written as "<n>ms", which reads back as itself.
 */
function stored(app: AppConfig): string {
  if (!app.oidc) return JSON.stringify(app);
  const { accessTokenLifetime, idTokenLifetime, refreshTokenLifetime } = app.oidc;
  const ms = (value: number) => `${value}ms`;
  return JSON.stringify({ ...app, oidc: { ...app.oidc, accessTokenLifetime: ms(accessTokenLifetime), idTokenLifetime: ms(idTokenLifetime), refreshTokenLifetime: ms(refreshTokenLifetime) } });
}

/** The key on which every create and change of a console app with a client id waits its turn (see `clientIdTaken`). */
const CLIENT_IDS = 'apps/oidc-client-ids';

/**
 * An id, a host or a client id another app has: 409 `conflict`, naming it, for the field a person
 * changes. What holds it is named too (an app in the configuration file cannot be changed in the console).
 * `what` is the host, or the client id.
 */
function taken(field: 'id' | 'publicUrl' | 'oidc.clientId', holder: { id: string; fromConfig: boolean }, what: string): AppError {
  const where = holder.fromConfig ? 'An app in the configuration file' : 'Another app';
  const reason =
    field === 'id' ? `${where} already has the id "${holder.id}"` : field === 'publicUrl' ? `${where} ("${holder.id}") already uses ${what}` : `${where} ("${holder.id}") already signs in with the client id "${what}"`;
  return new AppError('conflict', { params: { reason }, field });
}

/**
 * Apps created in the admin console: validated exactly like `apps:` in the config file (the same zod
 * schema, the same rules for the whole set), stored as JSON, and loaded into the registry at once. One
 * app per id and per host, checked against the registry (the config file's apps too) and kept by the
 * database for the console's own: two creates at once (two admins, two nodes) cannot both take one.
 */
export class AppStore {
  constructor(
    private readonly db: Db,
    private readonly registry: AppRegistry,
    private readonly portalUrl: string,
    private readonly now: () => number = Date.now,
    private readonly log?: Pick<FastifyBaseLogger, 'warn'>,
    /** Told of every change, for the other workers and nodes (they load the apps again). */
    private readonly changes?: Pick<ChangeFeed, 'publish'>,
  ) {}

  /** Loads the stored apps into the registry (at start, and after every change). */
  async load(): Promise<AppConfig[]> {
    // Oldest first, then by id: the same order on every node and database, so the same app wins a clash
    // with a config app everywhere (the registry keeps the first of each id and host).
    const rows = await this.db.selectFrom('apps').selectAll().orderBy('created_at').orderBy(inCodePointOrder(this.db, 'id')).execute();
    const apps = rows.flatMap((row) => {
      // A stored definition that is not JSON, or no longer validates (a policy that cannot be parsed, an
      // empty allow list), is left out — its host then opens nothing — never half-applied. It must not
      // stop the rest from loading either: a throw here would keep every app's previous definition in
      // the registry (an admin's tightened policy among them) and stop Gatehouse from starting.
      const parsed = appSchema.safeParse(this.withoutEveryToken(row.id, parseJson(row.definition)));
      if (parsed.success) return [parsed.data];
      this.log?.warn({ appId: row.id, problems: formatIssues(parsed.error.issues) }, `console app ${row.id} is left out: its stored definition is not valid`);
      return [];
    });
    this.registry.setConsoleApps(apps);
    return apps;
  }

  /**
   * A definition saved when `passAccessToken: true` meant every provider's token: read as no provider's
   * (fail closed: nobody guesses which were meant), with a warning telling the admin to name them. The
   * app itself keeps working, and stays in the console to be edited; refusing it would take it down.
   */
  private withoutEveryToken(id: string, definition: unknown): unknown {
    if (typeof definition !== 'object' || definition === null || (definition as { passAccessToken?: unknown }).passAccessToken !== true) return definition;
    this.log?.warn(
      { appId: id },
      `console app ${id}: passAccessToken: true (every provider's access token) is no longer accepted; it receives no token until an admin names the providers on its page in the console`,
    );
    return { ...definition, passAccessToken: [] };
  }

  async create(input: unknown): Promise<AppConfig> {
    const app = this.validate(input, undefined);
    const now = this.now();
    const host = storedHostOf(app);
    // Checked against the registry above, and again by the database (the id's primary key, the host's
    // unique index): two creates of one id or host at once both pass the first check, and the second
    // must get the answer a later one gets. No conflict target: either index refuses the row. A client
    // id has no column of its own: the creates and changes that give one take turns (`clientIdTaken`).
    const inserted = await this.db.transaction().execute(async (trx) => {
      if (app.oidc) {
        await serializeOn(trx, [CLIENT_IDS]);
        const holder = await clientIdTaken(trx, app);
        if (holder) throw taken('oidc.clientId', { id: holder, fromConfig: false }, clientIdOf(app));
      }
      return trx
        .insertInto('apps')
        .values({ id: app.id, definition: stored(app), host, created_at: now, updated_at: now })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
    });
    // (An app Gatehouse does not guard holds no host: only its id can have been refused.)
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw await this.storedConflict(app.id, host ?? undefined);
    await this.load();
    this.changes?.publish({ type: 'apps-changed' });
    return app;
  }

  async update(id: string, input: unknown): Promise<{ before: AppConfig; after: AppConfig }> {
    const before = this.consoleApp(id);
    const after = this.validate({ ...(input as object), id }, id);
    const host = storedHostOf(after);
    try {
      await this.db.transaction().execute(async (trx) => {
        if (after.oidc) {
          await serializeOn(trx, [CLIENT_IDS]);
          const holder = await clientIdTaken(trx, after);
          if (holder) throw taken('oidc.clientId', { id: holder, fromConfig: false }, clientIdOf(after));
        }
        await trx.updateTable('apps').set({ definition: stored(after), host, updated_at: this.now() }).where('id', '=', id).execute();
      });
    } catch (error) {
      // Another app took the host since the registry was loaded (a create or a change on another node).
      if (isUniqueViolation(error)) throw await this.storedConflict(undefined, hostOf(after));
      throw error;
    }
    await this.load();
    this.changes?.publish({ type: 'apps-changed' });
    return { before, after };
  }

  async remove(id: string): Promise<AppConfig> {
    const before = this.consoleApp(id);
    await this.db.transaction().execute(async (trx) => {
      // Its client secrets go with it (a later app of this id is another app): waiting for a secret
      // being created for it (ClientSecretStore.create takes the same turn), so none is left behind.
      await serializeOn(trx, [clientSecretsKey(id)]);
      await trx.deleteFrom('op_client_secrets').where('app_id', '=', id).execute();
      await trx.deleteFrom('apps').where('id', '=', id).execute();
    });
    await this.load();
    this.changes?.publish({ type: 'apps-changed' });
    return before;
  }

  private consoleApp(id: string): AppConfig {
    const app = this.registry.get(id);
    if (!app) throw new AppError('not_found');
    if (this.registry.source(id) === 'config') throw new AppError('app_from_config');
    return app;
  }

  /**
   * What the database refused a row for: the app that has the id (when there is one to check) or the
   * host (when the row has one). Read after the refusal, from the database: the registry may not know
   * that app yet.
   */
  private async storedConflict(id: string | undefined, host: string | undefined): Promise<AppError> {
    const holders = await this.db
      .selectFrom('apps')
      .select(['id', 'host'])
      .where((eb) => eb.or([...(host === undefined ? [] : [eb('host', '=', host)]), ...(id === undefined ? [] : [eb('id', '=', id)])]))
      .execute();
    const sameId = holders.find((holder) => holder.id === id);
    if (sameId) return taken('id', { id: sameId.id, fromConfig: false }, host ?? '');
    const holder = host === undefined ? undefined : holders.find((row) => row.host === host);
    if (holder && host !== undefined) return taken('publicUrl', { id: holder.id, fromConfig: false }, host);
    // The holder is gone again already; the id or the host was taken when the row was refused all the same.
    const reason =
      id === undefined ? `Another app has just taken ${host}` : host === undefined ? `Another app has just taken the id "${id}"` : `Another app has just taken the id "${id}" or ${host}`;
    return new AppError('conflict', { params: { reason }, field: id === undefined ? 'publicUrl' : 'id' });
  }

  private validate(input: unknown, replacing: string | undefined): AppConfig {
    const parsed = appSchema.safeParse(input);
    if (!parsed.success) throw new AppValidationError(formatIssues(parsed.error.issues));
    // A console client's secrets are Gatehouse's to make (shown once, kept hashed): one typed into a
    // definition would be stored in it, in plain text, and shown back with it.
    if (parsed.data.oidc?.secrets) throw new AppValidationError(['oidc.secrets: only in the configuration file: a console app gets secrets Gatehouse generates, on its page']);
    const others = this.registry.all().filter((app) => app.id !== replacing);
    const issues = appSetIssues(this.portalUrl, [...others, parsed.data]).filter((issue) => issue.index === others.length);
    // A definition that is wrong in itself is a 400 with every problem (a taken id among them); one whose
    // only fault is an id or a host another app has is a 409 naming it.
    if (issues.some((issue) => !issue.conflict)) throw new AppValidationError(issues.map((issue) => `${issue.field}: ${issue.message}`));
    const app = parsed.data;
    const byId = others.find((other) => other.id === app.id);
    if (byId) throw taken('id', { id: byId.id, fromConfig: this.registry.source(byId.id) === 'config' }, hostOf(app));
    const byHost = app.guard ? others.find((other) => other.guard && hostOf(other) === hostOf(app)) : undefined;
    if (byHost) throw taken('publicUrl', { id: byHost.id, fromConfig: this.registry.source(byHost.id) === 'config' }, hostOf(app));
    const byClientId = app.oidc ? others.find((other) => other.oidc && clientIdOf(other) === clientIdOf(app)) : undefined;
    if (byClientId) throw taken('oidc.clientId', { id: byClientId.id, fromConfig: this.registry.source(byClientId.id) === 'config' }, clientIdOf(app));
    return app;
  }
}

/** The key on which the creation of an app's client secrets and the app's deletion take turns. */
export function clientSecretsKey(appId: string): string {
  return `apps/client-secrets/${appId}`;
}

/**
 * The console app (other than this one) whose stored definition signs in with this app's client id,
 * read in the transaction that stores it, after the turn on CLIENT_IDS: two creates or changes of one
 * client id at once (two admins, two nodes) both pass the registry's check, and only one may win.
 */
async function clientIdTaken(trx: Db, app: AppConfig): Promise<string | undefined> {
  const clientId = clientIdOf(app);
  const rows = await trx.selectFrom('apps').select(['id', 'definition']).where('id', '!=', app.id).execute();
  return rows.find((row) => {
    const stored = parseJson(row.definition) as { id?: unknown; oidc?: { clientId?: unknown } } | undefined;
    return stored?.oidc !== undefined && (typeof stored.oidc.clientId === 'string' ? stored.oidc.clientId : row.id) === clientId;
  })?.id;
}

/** The stored JSON, or undefined (which no schema accepts) when it does not parse. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
