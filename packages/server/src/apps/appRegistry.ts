import { createHash } from 'node:crypto';
import type { OidcClientDefinition } from '@gatehouse/contract';
import type { AppConfig } from '../config/schema.js';

export type AppSource = 'config' | 'console';

/** An app that signs people in with OpenID Connect, found by its client id. */
export interface OidcClient {
  app: AppConfig;
  /** The app's oidc block, without the config file's secrets (their hashes are the registry's alone). */
  oidc: OidcClientDefinition;
  /** The `client_id` (the oidc block's, or the app's id). */
  clientId: string;
}

/** The client id an app's oidc block gives it: its own, or the app's id. */
export function clientIdOf(app: { id: string; oidc?: { clientId?: string | undefined } | undefined }): string {
  return app.oidc?.clientId ?? app.id;
}

/**
 * A client secret's digest, as stored and compared: SHA-256. A secret Gatehouse generates has 256 bits
 * of entropy, and a config file's is at least 32 characters (MIN_CLIENT_SECRET_LENGTH): nobody guesses
 * one from its hash by trying candidates, so a slow password hash (scrypt, argon2) would only cost every
 * token request its time and buy nothing. What a stolen table would give is still only digests.
 */
export function clientSecretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * The protected apps, found by the host they are reached at: those in gatehouse.yaml (read-only) and
 * those created in the admin console (replaced as a whole whenever they change, so a change counts
 * from the next request on). An app that signs people in with OpenID Connect is also found by its
 * client id (`client`).
 *
 * An app with `guard: false` (OpenID Connect alone) is not found by host, nor by `guarded`, and its
 * origin is no return-to destination: Gatehouse answers nothing on its host (no proxy, forward-auth or
 * handshake), so its host need not be unique either. `get`, `all` and `client` know it.
 *
 * Config apps' client secrets are hashed here, as the config is put in force, and the apps kept without
 * them: nothing that reads an app from the registry (the console's views, the audit log) can hold one.
 */
export class AppRegistry {
  private configApps: readonly AppConfig[];
  private consoleApps: readonly AppConfig[] = [];
  private byHost = new Map<string, AppConfig>();
  private byId = new Map<string, AppConfig>();
  private byClientId = new Map<string, OidcClient>();
  /** The SHA-256 digests of config apps' client secrets, by app id. */
  private configSecretDigests = new Map<string, readonly Buffer[]>();
  private sources = new Map<string, AppSource>();
  private appOrigins: ReadonlySet<string> = new Set();
  private readonly listeners: Array<() => void> = [];
  /** Whether any app receives some provider's IdP access token (only then are access tokens kept at all). */
  passesAccessTokens = false;

  constructor(configApps: readonly AppConfig[], consoleApps: readonly AppConfig[] = []) {
    this.configApps = configApps;
    this.setConsoleApps(consoleApps);
  }

  /** Replaces the console's apps (config apps win a clash; the console refuses clashes anyway). */
  setConsoleApps(consoleApps: readonly AppConfig[]): void {
    this.stage(this.configApps, consoleApps)();
  }

  /** Replaces the config file's apps (a reload). */
  setConfigApps(configApps: readonly AppConfig[]): void {
    this.stageConfigApps(configApps)();
  }

  /**
   * Prepares the config file's apps of a reload without changing anything yet: the returned function
   * puts them in force in one step, and tells the listeners (open WebSockets and streams answer to the
   * new policies at once), even when the apps are the same: a reload may change who is an admin.
   */
  stageConfigApps(configApps: readonly AppConfig[]): () => void {
    return this.stage(configApps, this.consoleApps);
  }

  private stage(configApps: readonly AppConfig[], consoleApps: readonly AppConfig[]): () => void {
    const byHost = new Map<string, AppConfig>();
    const byId = new Map<string, AppConfig>();
    const byClientId = new Map<string, OidcClient>();
    const configSecretDigests = new Map<string, readonly Buffer[]>();
    const sources = new Map<string, AppSource>();
    const add = (given: AppConfig, source: AppSource) => {
      const host = new URL(given.publicUrl).host;
      const clientId = given.oidc ? clientIdOf(given) : undefined;
      // The first app of an id, a guarded host or a client id keeps it (config apps come first; both the
      // config check and the console refuse such clashes, so this only settles a race between nodes).
      if (byId.has(given.id) || (given.guard && byHost.has(host)) || (clientId !== undefined && byClientId.has(clientId))) return;
      const app = withoutSecrets(given);
      if (app.guard) byHost.set(host, app);
      byId.set(app.id, app);
      sources.set(app.id, source);
      if (app.oidc && clientId !== undefined) byClientId.set(clientId, { app, oidc: app.oidc, clientId });
      // Only a config app's: a console app's secrets are Gatehouse's own (clientSecretStore.ts).
      if (source === 'config' && given.oidc?.secrets) configSecretDigests.set(app.id, given.oidc.secrets.map(clientSecretDigest));
    };
    for (const app of configApps) add(app, 'config');
    for (const app of consoleApps) add(app, 'console');
    const appOrigins = new Set([...byHost.values()].map((app) => new URL(app.publicUrl).origin));
    const passesAccessTokens = [...byId.values()].some((app) => app.passAccessToken.length > 0);
    return () => {
      this.configApps = configApps;
      this.consoleApps = consoleApps;
      this.byHost = byHost;
      this.byId = byId;
      this.byClientId = byClientId;
      this.configSecretDigests = configSecretDigests;
      this.sources = sources;
      this.appOrigins = appOrigins;
      this.passesAccessTokens = passesAccessTokens;
      for (const listener of this.listeners) listener();
    };
  }

  /** Called after every change to the set of apps (e.g. to let go of upstreams no app uses any more). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The guarded app for a Host header value (host[:port], compared case-insensitively). */
  forHost(host: string | undefined): AppConfig | undefined {
    return host ? this.byHost.get(host.toLowerCase()) : undefined;
  }

  /** Any app by id, guarded or not (the console, the audit log's names, the OpenID Provider). */
  get(id: string): AppConfig | undefined {
    return this.byId.get(id);
  }

  /**
   * An app whose host Gatehouse guards, by id: what forward-auth, the app-host handshake and open
   * answers ask for. An OpenID-Connect-only app (`guard: false`) is unknown to them: Gatehouse answers
   * nothing for its host, so a forward-auth check or a handshake naming it must not let anyone in.
   */
  guarded(id: string): AppConfig | undefined {
    const app = this.byId.get(id);
    return app?.guard ? app : undefined;
  }

  /** The app that signs people in with OpenID Connect as this `client_id`, with its oidc block. */
  client(clientId: string): OidcClient | undefined {
    return this.byClientId.get(clientId);
  }

  /** The SHA-256 digests of a config app's client secrets (none for a console app: see ClientSecretStore). */
  configSecrets(appId: string): readonly Buffer[] {
    return this.configSecretDigests.get(appId) ?? [];
  }

  source(id: string): AppSource | undefined {
    return this.sources.get(id);
  }

  all(): AppConfig[] {
    return [...this.byId.values()];
  }

  /** App origins a return-to URL may point at: those of guarded apps (the handshake lands there). */
  origins(): ReadonlySet<string> {
    return this.appOrigins;
  }

  get size(): number {
    return this.byId.size;
  }
}

/** The app without its oidc block's secrets (kept only as digests). */
function withoutSecrets(app: AppConfig): AppConfig {
  if (!app.oidc?.secrets) return app;
  const { secrets: _secrets, ...oidc } = app.oidc;
  return { ...app, oidc };
}

const origins = new WeakMap<AppConfig, string>();

/** An app's public origin (parsed once per app: it is needed on every proxied request). */
export function originOf(app: AppConfig): string {
  let origin = origins.get(app);
  if (origin === undefined) {
    origin = new URL(app.publicUrl).origin;
    origins.set(app, origin);
  }
  return origin;
}
