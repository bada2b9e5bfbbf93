import { appSchema, formatIssues } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { AppRegistry } from './appRegistry.js';
import { appSetIssues, duplicateAppId } from '../config/appSetIssues.js';
import type { AppConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { ChangeFeed } from '../storage/changes.js';
import type { Db } from '../storage/database.js';

/** A definition the console cannot accept, with the path of each bad field ("policy.allow[0]: …"). */
export class AppValidationError extends AppError {
  constructor(readonly problems: string[]) {
    super('bad_request', { params: { reason: problems.join('; ') } });
  }
}

/**
 * Apps created in the admin console: validated exactly like `apps:` in the config file (the same zod
 * schema, the same rules for the whole set), stored as JSON, and loaded into the registry at once.
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
    const rows = await this.db.selectFrom('apps').selectAll().orderBy('created_at').execute();
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
    // Checked against the registry above, and again by the database: two creates of one id at once (two
    // admins, two nodes) both pass the first check, and the second must get the answer a later one gets.
    const inserted = await this.db
      .insertInto('apps')
      .values({ id: app.id, definition: JSON.stringify(app), created_at: now, updated_at: now })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw new AppValidationError([`id: ${duplicateAppId(app.id)}`]);
    await this.load();
    this.changes?.publish({ type: 'apps-changed' });
    return app;
  }

  async update(id: string, input: unknown): Promise<{ before: AppConfig; after: AppConfig }> {
    const before = this.consoleApp(id);
    const after = this.validate({ ...(input as object), id }, id);
    await this.db.updateTable('apps').set({ definition: JSON.stringify(after), updated_at: this.now() }).where('id', '=', id).execute();
    await this.load();
    this.changes?.publish({ type: 'apps-changed' });
    return { before, after };
  }

  async remove(id: string): Promise<AppConfig> {
    const before = this.consoleApp(id);
    await this.db.deleteFrom('apps').where('id', '=', id).execute();
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

  private validate(input: unknown, replacing: string | undefined): AppConfig {
    const parsed = appSchema.safeParse(input);
    if (!parsed.success) throw new AppValidationError(formatIssues(parsed.error.issues));
    const others = this.registry.all().filter((app) => app.id !== replacing);
    const issues = appSetIssues(this.portalUrl, [...others, parsed.data]).filter((issue) => issue.index === others.length);
    if (issues.length > 0) throw new AppValidationError(issues.map((issue) => `${issue.field}: ${issue.message}`));
    return parsed.data;
  }
}

/** The stored JSON, or undefined (which no schema accepts) when it does not parse. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
