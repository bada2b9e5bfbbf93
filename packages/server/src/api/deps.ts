import type { AccountStore } from '../accounts/accountStore.js';
import type { IdentityGroups } from '../accounts/effectiveGroups.js';
import type { AuditLog } from '../audit/auditLog.js';
import type { ProviderRegistry } from '../providers/providerRegistry.js';
import type { AppRegistry } from '../apps/appRegistry.js';
import type { ReturnToPolicy } from '../apps/returnTo.js';
import type { PolicySubject } from '../authorize/policy.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { EndGrants } from '../provide/endGrants.js';
import type { OpStore } from '../provide/opStore.js';

/** What the portal's own API (`/api/session`, `/api/providers`, `/api/apps`, `/api/me/...`) takes. */
export interface ApiDeps {
  /** The organisation's name in force now (a config reload may rename it). */
  organizationName(): string;
  providers: Pick<ProviderRegistry, 'enabled' | 'name' | 'availability'>;
  sessions: SessionStore;
  accounts: Pick<AccountStore, 'listIdentities' | 'unlink'>;
  audit: Pick<AuditLog, 'record' | 'forUser' | 'pageForUser'>;
  apps: Pick<AppRegistry, 'all' | 'forHost' | 'get'>;
  cookieKey: Buffer;
  /** Where a sign-in may return to, as things stand now (the apps change). */
  returnToPolicy(): ReturnToPolicy;
  /** The groups of a session that count, and who is an admin. */
  groupsOf(current: CurrentSession): IdentityGroups;
  isAdmin(current: CurrentSession): boolean;
  /** What a policy sees of a session (email, counted groups, roles, claims). */
  policySubjectOf(current: CurrentSession): PolicySubject;
  /** The apps signed in with Gatehouse (the OpenID Provider's grants), per session. */
  grants: Pick<OpStore, 'grant' | 'liveGrantsOfSessions'>;
  /** Ends grants: "Sign out of <app>" (provide/endGrants.ts). */
  endGrants: EndGrants;
}
