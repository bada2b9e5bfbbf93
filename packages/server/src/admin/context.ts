import type { FastifyRequest } from 'fastify';
import type { AccountStore } from '../accounts/accountStore.js';
import type { SignInSettingsStore } from '../accounts/signInSettings.js';
import type { UserDirectory, UserSummary } from '../accounts/userDirectory.js';
import type { AuditEntry, AuditLog } from '../audit/auditLog.js';
import type { ProviderRegistry } from '../providers/providerRegistry.js';
import type { ProviderStore } from '../providers/providerStore.js';
import type { AppRegistry } from '../apps/appRegistry.js';
import type { AppStore } from '../apps/appStore.js';
import type { ClientSecretStore } from '../apps/clientSecretStore.js';
import type { ReloadRequest, ReloadResult } from '../config/reloadable.js';
import type { InForce, RunningConfig } from '../config/running.js';
import type { Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import { signedIn } from '../sessions/guard.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import type { ReviewCause, ReviewScope } from '../sessions/admissionReview.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { ChangeFeed } from '../events/changes.js';
import type { EndGrants } from '../provide/endGrants.js';
import type { OpStore } from '../provide/opStore.js';
import { iso, isoOrNull } from '../http/isoTime.js';

/** What the admin console's API takes: the stores it reads and changes, and the portal's origin. */
export interface AdminDeps {
  portalOrigin: string;
  accounts: AccountStore;
  directory: UserDirectory;
  sessions: SessionStore;
  /** Cached sessions carry roles: a role change is published, and every cache drops them. */
  changes: Pick<ChangeFeed, 'publish'>;
  audit: AuditLog;
  apps: AppRegistry;
  appStore: AppStore;
  clientSecrets: ClientSecretStore;
  providers: ProviderRegistry;
  providerStore: ProviderStore;
  signInSettings: SignInSettingsStore;
  /**
   * Ends the live sessions that no longer pass the rules of who may sign in, after an admin narrowed
   * them (sessions/admissionReview.ts); what it ended.
   */
  reviewAdmission(scope: ReviewScope, cause: ReviewCause): Promise<number>;
  /** The apps signed in with Gatehouse (the OpenID Provider's grants): per app, per user. */
  grants: Pick<OpStore, 'liveGrantViewsOfApp' | 'liveGrantViewsOfUser'>;
  /** Ends grants: one person's, or everyone's of an app (provide/endGrants.ts). */
  endGrants: EndGrants;
  /** Reads the config file again and applies it on every worker of this node (reload.ts). */
  reloadConfig(request: ReloadRequest): Promise<ReloadResult>;
  /**
   * The config file and its last reload; the configuration in force: the admins it names (they cannot
   * be removed in the console), and where Gatehouse listens and whom it believes as a proxy (fixed at
   * start), for the console's proxy configurations.
   */
  running: Pick<RunningConfig, 'report'> & InForce<Pick<Config, 'admins' | 'listen' | 'trustedProxies' | 'mode'>>;
}


interface Person {
  id: string;
  email: string;
}

type PeopleEvent = Omit<AuditEntry, 'time'> & { time: string; actor: Person | null; target: Person | null };
type UserView = Omit<UserSummary, 'createdAt' | 'lastSignInAt'> & { createdAt: string; lastSignInAt: string | null };

/** What every admin route module shares: the area's dependencies and small helpers. */
export interface AdminContext extends AdminDeps {
  /** The admin making this request (the guard has already checked there is one). */
  actorOf(request: FastifyRequest): Promise<CurrentSession>;
  /** Audit events with the actor's and target's emails (one query per page). */
  withPeople(events: AuditEntry[]): Promise<PeopleEvent[]>;
  summary(user: UserSummary): UserView;
  existingUser(id: string): Promise<UserSummary>;
}

export function adminContext(deps: AdminDeps): AdminContext {
  return {
    ...deps,
    actorOf: signedIn,
    async withPeople(events) {
      const ids = [...new Set(events.flatMap((event) => [event.actorUserId, event.targetUserId]).filter((id): id is string => Boolean(id)))];
      const emails = await deps.accounts.emailsOf(ids);
      const person = (id: string | null) => (id ? { id, email: emails.get(id) ?? '' } : null);
      return events.map((event) => ({ ...event, time: iso(event.time), actor: person(event.actorUserId), target: person(event.targetUserId) }));
    },
    summary: (user) => ({ ...user, createdAt: iso(user.createdAt), lastSignInAt: isoOrNull(user.lastSignInAt) }),
    async existingUser(id) {
      const user = await deps.directory.get(id);
      if (!user) throw new AppError('not_found');
      return user;
    },
  };
}
