import cluster from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import { AccountStore } from './accounts/accountStore.js';
import { SignInSettingsStore } from './accounts/signInSettings.js';
import { UserDirectory } from './accounts/userDirectory.js';
import { AppStore } from './apps/appStore.js';
import { ClientSecretStore } from './apps/clientSecretStore.js';
import { ProviderStore } from './providers/providerStore.js';
import { AuditLog } from './audit/auditLog.js';
import { ClaimsRefresher } from './authenticate/claimsRefresher.js';
import { LogoutTokenStore } from './authenticate/logoutTokenStore.js';
import { AppRegistry } from './apps/appRegistry.js';
import { AssertionSigner } from './authorize/assertion.js';
import { ID_TOKEN_KEY_PURPOSES, SigningKeys } from './keys/signingKeys.js';
import { OpStore } from './provide/opStore.js';
import { ProviderRegistry } from './providers/providerRegistry.js';
import { SignInAttempts } from './authenticate/signInAttempts.js';
import { RunningConfig } from './config/running.js';
import type { Config } from './config/schema.js';
import { workerLimits, type NodeLimits } from './limits/clusterLimits.js';
import type { PrimaryChannel } from './cluster/channel.js';
import { createAccessLog, type AccessLog } from './operations/accessLog.js';
import { createMetrics, idpFetch, NO_METRICS, type Metrics, type MetricsRegistry } from './operations/metrics.js';
import { connect } from './providers/kinds/index.js';
import { openSharedLimits, type SharedLimits } from './limits/sharedLimits.js';
import { loadSecrets, type Secrets } from './secrets.js';
import { cookieNames, type CookieNames } from './sessions/cookies.js';
import { AppSessions } from './sessions/appSessions.js';
import { reviewAdmissionTwice, type ReviewCause, type ReviewScope } from './sessions/admissionReview.js';
import { SessionResolver } from './sessions/sessionResolver.js';
import { SessionStore } from './sessions/sessionStore.js';
import { createTokenCipher } from './sessions/tokenCipher.js';
import { ChangeFeed } from './events/changes.js';
import { openDatabase, type DatabaseHandle } from './storage/database.js';
import { notifyThrough, postgresChangeTransport } from './events/pgChanges.js';
import { logoutTokenSigner } from './provide/backchannelDelivery.js';
import { backchannelLogout, type BackchannelLogout } from './provide/backchannelLogout.js';
import type { EndGrants } from './provide/endGrants.js';

/** Everything the HTTP layer needs, built once at start (and by tests with their own config). */

/** How long a session's activity waits to be written with others' (sessions/sessionStore.ts, touch). */
const ACTIVITY_FLUSH_MS = 1_000;
export interface Services {
  /**
   * The configuration in force: `running.current`, read at use, is the current one, replaced as a whole
   * by a reload (reload.ts). What only a restart changes is the same for the life of the process.
   */
  running: RunningConfig;
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
  /** The OpenID Connect clients' secrets: the console's, made and revoked there, and `verify` for the token endpoint. */
  clientSecrets: ClientSecretStore;
  signingKeys: SigningKeys;
  /** The OpenID Provider's storage: oidc-provider's payloads and the grants with their Gatehouse sessions. */
  opStore: OpStore;
  /** The OpenID Provider's ID token keys, RS256 and ES256: purposes of their own, published at /oidc/jwks only. */
  idTokenKeys: SigningKeys[];
  /**
   * Back-channel logout to the OpenID Connect apps (provide/backchannelLogout.ts): the outbox (the
   * console's counts per app) and `ties.grantsEnded`, for grants ended elsewhere than with a session.
   */
  backchannelLogout: BackchannelLogout;
  assertions: AssertionSigner;
  /** Ends OpenID Provider grants: the one way every caller does it (provide/endGrants.ts). */
  endGrants: EndGrants;
  /** The portal's origin, e.g. http://localhost:4180 (no trailing slash). */
  portalOrigin: string;
  /** Whether cookies are Secure and __Host- prefixed (the public URL is https). */
  secureCookies: boolean;
  cookies: CookieNames;
  /** The Redis client of `cache.url`, for the sign-in rate limit only; undefined without one. */
  sharedLimits: SharedLimits | undefined;
  /** Without Redis, in a worker of several: the sign-in rate limit counted by the node's primary. */
  nodeLimits: NodeLimits | undefined;
  /** Changes to shared state, published by the stores and heard by every cache (events/changes.ts). */
  changes: ChangeFeed;
  /** What is recorded for Prometheus (NO_METRICS when `metrics:` is not configured). */
  metrics: Metrics;
  /** The registry behind `metrics`, for the metrics listener (cli/start.ts); undefined when off. */
  metricsRegistry: MetricsRegistry | undefined;
  /** One line per proxied or forward-auth request (operations/accessLog.ts); undefined when off. */
  accessLog: AccessLog | undefined;
  /**
   * Judges the live sessions of these providers (or all) against the rules of who may sign in as they
   * are now, ends those that no longer pass, and does so once more a few seconds later
   * (sessions/admissionReview.ts); resolves to what the first pass ended.
   */
  reviewAdmission(scope: ReviewScope, cause: ReviewCause): Promise<number>;
  close(): Promise<void>;
}

/**
 * Reads one kind of shared state again after a change elsewhere, retrying with backoff while the
 * database does not answer: until it has, this node keeps the old copy, and says so in the log.
 */
function reloader(log: FastifyBaseLogger) {
  const pending = new Map<string, () => Promise<unknown>>();
  return function reload(what: string, load: () => Promise<unknown>): void {
    const running = pending.has(what);
    pending.set(what, load);
    if (running) return;
    const attempt = (delay: number): void => {
      const next = pending.get(what)!;
      next().then(
        () => {
          // A change that arrived while this load ran is read once more.
          if (pending.get(what) === next) pending.delete(what);
          else attempt(0);
        },
        (error: unknown) => {
          log.error({ err: error, what }, 'could not read a change made elsewhere; retrying');
          setTimeout(() => attempt(Math.min(Math.max(delay * 2, 500), 30_000)), delay || 500).unref();
        },
      );
    };
    attempt(0);
  };
}

export interface ServiceOptions {
  /** The node this process is a worker of (`workers:`), shared by its workers; see events/pgChanges.ts. */
  node?: string;
  /** The file the configuration was read from (undefined: the built-in defaults), read again by a reload. */
  file?: string | undefined;
  /** A worker's channel to its primary (`workers:`): without Redis, the node's rate limits are counted there. */
  primary?: PrimaryChannel | undefined;
}

export async function createServices(config: Config, log: FastifyBaseLogger, options: ServiceOptions = {}): Promise<Services> {
  // What is built here once reads the reloadable settings at each use from `running.current` (a reload
  // replaces the configuration in force); `config` is the one read at start, for what only a restart changes.
  const running = new RunningConfig(config, options.file);
  const secrets = loadSecrets(config);
  const database = await openDatabase(config, log);
  // Metrics are recorded in every process that serves; in a worker of several, the primary gathers them.
  const metricsRegistry = config.metrics ? createMetrics({ cluster: cluster.isWorker }) : undefined;
  const metrics = metricsRegistry?.metrics ?? NO_METRICS;
  const providers = new ProviderRegistry(config.providers, log, metricsRegistry ? (provider) => connect(provider, { fetch: idpFetch(metrics, provider.id) }) : undefined);
  const portalOrigin = new URL(config.publicUrl).origin;
  const secureCookies = portalOrigin.startsWith('https:');
  const cipher = createTokenCipher(secrets);
  // What changed, here or on another worker or node (events/changes.ts): the stores publish, caches listen.
  const changes = new ChangeFeed((error, change) => log.error({ err: error, change: change.type }, 'a listener failed on a change'));
  // On PostgreSQL every process (each worker of each node) LISTENs on a connection of its own for the
  // other nodes' changes; the workers of one node hear each other over the node's channel (events/clusterChanges.ts).
  const newClient = database.newClient;
  if (newClient) {
    changes.attach(postgresChangeTransport({ client: newClient, notify: notifyThrough(database.db), log, node: options.node }));
  }
  // Activity (last seen) is written once a second for every session touched meanwhile (SessionStore.touch).
  const sessions = new SessionStore(database.db, cipher, () => running.current.session, Date.now, ACTIVITY_FLUSH_MS);
  let activityWarned = 0;
  sessions.onActivityError = (error) => {
    if (Date.now() - activityWarned < 60_000) return;
    activityWarned = Date.now();
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'the sessions’ last activity could not be written; it is kept and tried again');
  };
  // Answered once every worker of this node has dropped them (publishConfirmed); other nodes hear of it
  // through PostgreSQL within milliseconds (docs/deploy/high-availability.md).
  sessions.onRevoke((revoked) => changes.publishConfirmed({ type: 'sessions-ended', sessionIds: revoked.map((session) => session.id) }));
  const accounts = new AccountStore(database.db);
  // Console providers join the registry before anything can ask for one.
  const providerStore = new ProviderStore({ db: database.db, registry: providers, cipher, accounts, log, changes, production: config.mode === 'production' });
  await providerStore.load();
  const audit = new AuditLog(database.db);
  const apps = new AppRegistry(config.apps);
  const appStore = new AppStore(database.db, apps, config.publicUrl, undefined, log, changes);
  await appStore.load();
  const signInSettings = new SignInSettingsStore(database.db);
  const claims = new ClaimsRefresher({ providers, sessions, accounts, audit, apps, signInSettings }, () => ({
    interval: running.current.session.claimsRefreshInterval,
    maxAge: running.current.session.maxClaimsAge,
  }));
  const appSessions = new AppSessions(database.db);
  const resolver = new SessionResolver({ sessions, claims, providers, changes, cacheMaxBytes: () => running.current.session.cache.maxMemory });
  const signingKeys = new SigningKeys(database.db, cipher, undefined, changes);
  await signingKeys.load();
  const idTokenKeys = ID_TOKEN_KEY_PURPOSES.map((purpose) => new SigningKeys(database.db, cipher, undefined, changes, purpose));
  const assertions = new AssertionSigner(signingKeys, portalOrigin);
  // What another worker or node changed is read again from the database here.
  const reload = reloader(log);
  changes.subscribe((change, origin) => {
    if (origin === 'here') return;
    const everything = change.type === 'everything';
    if (everything || change.type === 'apps-changed') reload('apps', () => appStore.load());
    if (everything || change.type === 'providers-changed') reload('providers', () => providerStore.load());
    if (everything || change.type === 'signing-keys-changed') reload('signing keys', () => signingKeys.load());
  });
  const sharedLimits = openSharedLimits(config.cache, log);
  const nodeLimits = !sharedLimits && options.primary ? workerLimits(log, options.primary) : undefined;
  metricsRegistry?.readFrom({
    activeSessions: () => sessions.countLive(),
    sessionCache: () => resolver.cacheStats(),
    database: () => database.stats(),
  });
  const accessLog = createAccessLog(config);
  // When a Gatehouse session ends, here or by expiry, its OpenID Provider grants end and each app of
  // them with a back-channel URI is told, from the outbox every process drains (provide/).
  const idTokenKeysFor = (alg: 'RS256' | 'ES256') => idTokenKeys.find((keys) => keys.purpose === (alg === 'RS256' ? 'id-token-rs256' : 'id-token-es256'))!;
  const opStore = new OpStore(database.db);
  const logout = backchannelLogout({
    db: database.db,
    sessions,
    apps,
    audit,
    log,
    issuer: portalOrigin,
    grants: opStore,
    sign: logoutTokenSigner((alg) => idTokenKeysFor(alg).current()),
  });
  logout.start();
  // Ending grants, for every caller (the account center, the console): their codes and tokens go on
  // every node, and each app that takes back-channel logout is owed its logout token at once.
  const endGrants: EndGrants = async (filter, reason) => {
    const ended = await opStore.revokeGrants(filter, reason);
    if (ended.length > 0) await logout.ties.grantsEnded(ended, reason);
    return ended;
  };
  const admissionDeps = { sessions, audit, providers, organization: () => signInSettings.get(), log };
  return {
    running,
    secrets,
    database,
    providers,
    providerStore,
    signInSettings,
    sessions,
    accounts,
    attempts: new SignInAttempts(database.db, () => running.current.signIn.attemptLifetime),
    audit,
    claims,
    resolver,
    appSessions,
    directory: new UserDirectory(database.db, () => running.current.admins, providers),
    logoutTokens: new LogoutTokenStore(database.db),
    apps,
    appStore,
    clientSecrets: new ClientSecretStore(database.db, apps),
    signingKeys,
    idTokenKeys,
    opStore,
    backchannelLogout: logout,
    assertions,
    endGrants,
    portalOrigin,
    secureCookies,
    cookies: cookieNames(secureCookies),
    sharedLimits,
    nodeLimits,
    changes,
    metrics,
    metricsRegistry,
    accessLog,
    reviewAdmission: (scope, cause) => reviewAdmissionTwice(admissionDeps, scope, cause),
    async close() {
      await logout.stop();
      await changes.close();
      providers.close();
      await sharedLimits?.close();
      nodeLimits?.close();
      await sessions.stopActivity();
      await database.close();
      await accessLog?.close();
    },
  };
}
