import type { CookieNames } from '../sessions/cookies.js';
import type { AccountStore } from '../accounts/accountStore.js';
import type { SignInSettingsStore } from '../accounts/signInSettings.js';
import type { AuditLog } from '../audit/auditLog.js';
import type { AppRegistry } from '../apps/appRegistry.js';
import type { InForce } from '../config/running.js';
import type { Config } from '../config/schema.js';
import type { NodeLimits } from '../limits/clusterLimits.js';
import type { Metrics } from '../operations/metrics.js';
import type { SharedLimits } from '../limits/sharedLimits.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { LogoutTokenStore } from './logoutTokenStore.js';
import type { ProviderRegistry } from '../providers/providerRegistry.js';
import type { SignInAttempts } from './signInAttempts.js';

/** What signing in, linking, testing and signing out take. */
export interface AuthenticateDeps {
  /** Sign-in limits and clock skew, session lifetime, admins (who may run a test sign-in). */
  running: InForce<Pick<Config, 'signIn' | 'session' | 'admins'>>;
  portalOrigin: string;
  secureCookies: boolean;
  cookies: CookieNames;
  providers: ProviderRegistry;
  attempts: SignInAttempts;
  accounts: AccountStore;
  sessions: SessionStore;
  audit: AuditLog;
  signInSettings: SignInSettingsStore;
  /** Where a sign-in may return to, and which apps receive access tokens (kept for them). */
  apps: Pick<AppRegistry, 'origins' | 'passesAccessTokens'>;
  logoutTokens: LogoutTokenStore;
  isAdmin(current: CurrentSession): boolean;
  /** Redis for the sign-in rate limit when nodes share it (`cache.url`); without it each node counts alone. */
  sharedLimits?: Pick<SharedLimits, 'store'> | undefined;
  /** Without Redis, in a worker of several (`workers:`): the node's primary counts for all its workers. */
  nodeLimits?: Pick<NodeLimits, 'store'> | undefined;
  /** Sign-ins by provider and outcome. */
  metrics?: Pick<Metrics, 'signIn'> | undefined;
  /**
   * Publishes a hidden console provider once a test sign-in with it passed (providers/providerStore.ts);
   * true when this published it.
   */
  publishTested?: ((providerId: string) => Promise<boolean>) | undefined;
}
