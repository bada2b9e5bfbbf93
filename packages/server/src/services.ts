import type { FastifyBaseLogger } from 'fastify';
import { AccountStore } from './accounts/accountStore.js';
import { SignInSettingsStore } from './accounts/signInSettings.js';
import { UserDirectory } from './accounts/userDirectory.js';
import { AppStore } from './authorize/appStore.js';
import { ProviderStore } from './authenticate/providerStore.js';
import { AuditLog } from './audit/auditLog.js';
import { ClaimsRefresher } from './authenticate/claimsRefresher.js';
import { LogoutTokenStore } from './authenticate/logoutTokenStore.js';
import { AppRegistry } from './authorize/appRegistry.js';
import { AssertionSigner } from './authorize/assertion.js';
import { SigningKeys } from './authorize/signingKeys.js';
import { ProviderRegistry } from './authenticate/providerRegistry.js';
import { SignInAttempts } from './authenticate/signInAttempts.js';
import type { Config } from './config/schema.js';
import { openSharedLimits, type SharedLimits } from './http/sharedLimits.js';
import { loadSecrets, type Secrets } from './secrets.js';
import { cookieNames, type CookieNames } from './sessions/cookies.js';
import { AppSessions } from './sessions/appSessions.js';
import { SessionResolver } from './sessions/sessionResolver.js';
import { SessionStore } from './sessions/sessionStore.js';
import { createTokenCipher } from './sessions/tokenCipher.js';
import { openDatabase, type DatabaseHandle } from './storage/database.js';

/** Everything the HTTP layer needs, built once at start (and by tests with their own config). */
export interface Services {
  config: Config;
  secrets: Secrets;
  database: DatabaseHandle;
  providers: ProviderRegistry;
  providerStore: ProviderStore;
  signInSettings: SignInSettingsStore;
  sessions: SessionStore;
  accounts: AccountStore;
  attempts: SignInAttempts;
  audit: AuditLog;
  claims: ClaimsRefresher;
  resolver: SessionResolver;
  appSessions: AppSessions;
  /** The admin console's view of users (search, paging, admin status). */
  directory: UserDirectory;
  /** Back-channel logout tokens already acted on. */
  logoutTokens: LogoutTokenStore;
  apps: AppRegistry;
  appStore: AppStore;
  signingKeys: SigningKeys;
  assertions: AssertionSigner;
  /** The portal's origin, e.g. http://localhost:4180 (no trailing slash). */
  portalOrigin: string;
  /** Whether cookies are Secure and __Host- prefixed (the public URL is https). */
  secureCookies: boolean;
  cookies: CookieNames;
  /** The Redis client of `cache.url`, for the sign-in rate limit only; undefined without one. */
  sharedLimits: SharedLimits | undefined;
  close(): Promise<void>;
}

export async function createServices(config: Config, log: FastifyBaseLogger): Promise<Services> {
  const secrets = loadSecrets(config);
  const database = await openDatabase(config, log);
  const providers = new ProviderRegistry(config.providers, log);
  const portalOrigin = new URL(config.publicUrl).origin;
  const secureCookies = portalOrigin.startsWith('https:');
  const cipher = createTokenCipher(secrets);
  const sessions = new SessionStore(database.db, cipher, config.session);
  const accounts = new AccountStore(database.db);
  // Console providers join the registry before anything can ask for one.
  const providerStore = new ProviderStore({ db: database.db, registry: providers, cipher, accounts, log });
  await providerStore.load();
  const audit = new AuditLog(database.db);
  const apps = new AppRegistry(config.apps);
  const appStore = new AppStore(database.db, apps, config.publicUrl, undefined, log);
  await appStore.load();
  const claims = new ClaimsRefresher({ providers, sessions, accounts, audit, apps }, config.session.claimsRefreshInterval);
  const appSessions = new AppSessions(database.db);
  const resolver = new SessionResolver({ sessions, accounts, claims, appSessions, providers });
  const signingKeys = new SigningKeys(database.db, cipher);
  await signingKeys.load();
  const assertions = new AssertionSigner(signingKeys, portalOrigin);
  resolver.onClaimsChanged((sessionId) => assertions.forget(sessionId));
  const sharedLimits = openSharedLimits(config.cache, log);
  sessions.onRevoke((revoked) => revoked.forEach((session) => assertions.forget(session.id)));
  return {
    config,
    secrets,
    database,
    providers,
    providerStore,
    signInSettings: new SignInSettingsStore(database.db),
    sessions,
    accounts,
    attempts: new SignInAttempts(database.db, config.signIn.attemptLifetime),
    audit,
    claims,
    resolver,
    appSessions,
    directory: new UserDirectory(database.db, config.admins, providers),
    logoutTokens: new LogoutTokenStore(database.db),
    apps,
    appStore,
    signingKeys,
    assertions,
    portalOrigin,
    secureCookies,
    cookies: cookieNames(secureCookies),
    sharedLimits,
    async close() {
      providers.close();
      await sharedLimits?.close();
      await database.close();
    },
  };
}
