import type { AppConfig } from '../config/schema.js';

export type AppSource = 'config' | 'console';

/**
 * The protected apps, found by the host they are reached at: those in gatehouse.yaml (read-only) and
 * those created in the admin console (replaced as a whole whenever they change, so a change counts
 * from the next request on).
 */
export class AppRegistry {
  private configApps: readonly AppConfig[];
  private consoleApps: readonly AppConfig[] = [];
  private byHost = new Map<string, AppConfig>();
  private byId = new Map<string, AppConfig>();
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
    const sources = new Map<string, AppSource>();
    const add = (app: AppConfig, source: AppSource) => {
      const host = new URL(app.publicUrl).host;
      if (byId.has(app.id) || byHost.has(host)) return;
      byHost.set(host, app);
      byId.set(app.id, app);
      sources.set(app.id, source);
    };
    for (const app of configApps) add(app, 'config');
    for (const app of consoleApps) add(app, 'console');
    const appOrigins = new Set([...byId.values()].map((app) => new URL(app.publicUrl).origin));
    const passesAccessTokens = [...byId.values()].some((app) => app.passAccessToken.length > 0);
    return () => {
      this.configApps = configApps;
      this.consoleApps = consoleApps;
      this.byHost = byHost;
      this.byId = byId;
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

  /** The app for a Host header value (host[:port], compared case-insensitively). */
  forHost(host: string | undefined): AppConfig | undefined {
    return host ? this.byHost.get(host.toLowerCase()) : undefined;
  }

  get(id: string): AppConfig | undefined {
    return this.byId.get(id);
  }

  source(id: string): AppSource | undefined {
    return this.sources.get(id);
  }

  all(): AppConfig[] {
    return [...this.byId.values()];
  }

  /** App origins a return-to URL may point at. */
  origins(): ReadonlySet<string> {
    return this.appOrigins;
  }

  get size(): number {
    return this.byId.size;
  }
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
