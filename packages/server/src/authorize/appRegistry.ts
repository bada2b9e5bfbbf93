import type { AppConfig } from '../config/schema.js';

/** The protected apps, found by the host they are reached at. */
export class AppRegistry {
  private readonly byHost = new Map<string, AppConfig>();
  private readonly byId = new Map<string, AppConfig>();
  private readonly appOrigins: ReadonlySet<string>;
  /** Whether any app receives the IdP access token (only then are access tokens kept at all). */
  readonly passesAccessTokens: boolean;

  constructor(apps: readonly AppConfig[]) {
    for (const app of apps) {
      this.byHost.set(new URL(app.publicUrl).host, app);
      this.byId.set(app.id, app);
    }
    this.appOrigins = new Set(apps.map((app) => new URL(app.publicUrl).origin));
    this.passesAccessTokens = apps.some((app) => app.passAccessToken);
  }

  /** The app for a Host header value (host[:port], compared case-insensitively). */
  forHost(host: string | undefined): AppConfig | undefined {
    return host ? this.byHost.get(host.toLowerCase()) : undefined;
  }

  get(id: string): AppConfig | undefined {
    return this.byId.get(id);
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
