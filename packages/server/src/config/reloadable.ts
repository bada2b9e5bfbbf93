import { isDeepStrictEqual } from 'node:util';
import type { Config } from './schema.js';

/**
 * What a running Gatehouse takes from a new configuration without a restart. Everything else — where
 * it listens, its public URL, its database, its secrets, its workers, its mode and data directory, its
 * Redis, the development children, the proxies it believes — is fixed when it starts, and so is any key
 * not named here (one added later is restart-only until someone decides otherwise: fail closed).
 */
const RELOADABLE: ReadonlySet<string> = new Set(['organization', 'session', 'signIn', 'providers', 'admins', 'apps', 'forwardAuth', 'log']);

/** Within a reloadable section, what still takes a restart: the log's format picks its writer at start. */
const RESTART_WITHIN: Readonly<Record<string, readonly string[]>> = { log: ['format'] };

/** Entries of a list keyed by id (providers, apps): which came, went or changed. */
export interface EntryChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** What a new configuration changes of the running one, without a value (never a secret). */
export interface ConfigChanges {
  providers: EntryChanges;
  apps: EntryChanges;
  /** Admins named by email, or by `<group> from <provider>`. */
  admins: { added: string[]; removed: string[] };
  /** Every other reloadable setting that changed, by path: `session.idleTimeout`, `log.level`, … */
  settings: string[];
}

/** Two values read alike: as JSON, so a key set to undefined and a missing one are the same. */
function same(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(asJson(a), asJson(b));
}

function asJson(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The paths under `key` whose values differ: one level down for a section, the key itself otherwise. */
function differing(key: string, before: unknown, after: unknown): string[] {
  if (same(before, after)) return [];
  if (!isRecord(before) || !isRecord(after)) return [key];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((sub) => !same(before[sub], after[sub])).map((sub) => `${key}.${sub}`);
}

/** The settings a new configuration changes that take a restart (names only, never values). */
export function restartOnlyChanges(before: Config, after: Config): string[] {
  const was = before as unknown as Record<string, unknown>;
  const now = after as unknown as Record<string, unknown>;
  const keys = new Set([...Object.keys(was), ...Object.keys(now)]);
  return [...keys].flatMap((key) => {
    if (!RELOADABLE.has(key)) return differing(key, was[key], now[key]);
    return (RESTART_WITHIN[key] ?? []).flatMap((sub) => {
      const [a, b] = [was[key], now[key]].map((section) => (isRecord(section) ? section[sub] : undefined));
      return same(a, b) ? [] : [`${key}.${sub}`];
    });
  });
}

function entryChanges<T extends { id: string }>(before: readonly T[], after: readonly T[]): EntryChanges {
  const was = new Map(before.map((entry) => [entry.id, entry]));
  const now = new Map(after.map((entry) => [entry.id, entry]));
  return {
    added: [...now.keys()].filter((id) => !was.has(id)),
    removed: [...was.keys()].filter((id) => !now.has(id)),
    changed: [...now].filter(([id, entry]) => was.has(id) && !same(was.get(id), entry)).map(([id]) => id),
  };
}

function adminNames(admins: Config['admins']): string[] {
  return [...admins.emails, ...admins.groups.map(({ provider, group }) => `${group} from ${provider}`)];
}

/** What `after` changes of `before`, in the reloadable settings. */
export function describeChanges(before: Config, after: Config): ConfigChanges {
  const [wereAdmins, nowAdmins] = [adminNames(before.admins), adminNames(after.admins)];
  const settings = [...RELOADABLE]
    .filter((key) => key !== 'providers' && key !== 'apps' && key !== 'admins')
    .flatMap((key) => differing(key, before[key as keyof Config], after[key as keyof Config]))
    .filter((path) => !(RESTART_WITHIN[path.split('.')[0]!] ?? []).some((sub) => path.endsWith(`.${sub}`)));
  return {
    providers: entryChanges(before.providers, after.providers),
    apps: entryChanges(before.apps, after.apps),
    admins: { added: nowAdmins.filter((name) => !wereAdmins.includes(name)), removed: wereAdmins.filter((name) => !nowAdmins.includes(name)) },
    settings,
  };
}

export function isUnchanged(changes: ConfigChanges): boolean {
  const { providers, apps, admins, settings } = changes;
  return [providers.added, providers.removed, providers.changed, apps.added, apps.removed, apps.changed, admins.added, admins.removed, settings].every(
    (list) => list.length === 0,
  );
}

/**
 * The providers whose sessions a new configuration ends: those it removes or turns off, as when an
 * admin turns one off in the console (no session may outlive the provider that vouched for it).
 */
export function providersTurnedOff(before: Config, after: Config): string[] {
  const now = new Map(after.providers.map((provider) => [provider.id, provider]));
  return before.providers.filter((provider) => provider.enabled && !now.get(provider.id)?.enabled).map((provider) => provider.id);
}

/** What asked for a reload: the signal (`kill -HUP`, systemd's ExecReload) or an admin in the console. */
export type ReloadTrigger = 'SIGHUP' | 'console';

/** The admin who asked, for the audit log. */
export interface ReloadActor {
  userId: string;
  sessionId: string;
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export interface ReloadRequest {
  trigger: ReloadTrigger;
  actor?: ReloadActor | undefined;
}

/**
 * How a reload went: applied (or nothing to apply), with what deserves the operator's attention now
 * (the trust warnings check-config prints, and each provider whose IdP does not answer), one line each;
 * or refused with one line per problem.
 */
export type ReloadResult =
  | { outcome: 'applied' | 'unchanged'; changes: ConfigChanges; sessionsEnded: number; warnings: string[] }
  | { outcome: 'refused'; problems: string[] };
