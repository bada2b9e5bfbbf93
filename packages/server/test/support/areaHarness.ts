import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { AccountStore } from '../../src/accounts/accountStore.js';
import { adminStatus } from '../../src/accounts/admins.js';
import { sessionGroups } from '../../src/accounts/effectiveGroups.js';
import { SignInSettingsStore } from '../../src/accounts/signInSettings.js';
import { AuditLog } from '../../src/audit/auditLog.js';
import { ProviderRegistry } from '../../src/providers/providerRegistry.js';
import { AppRegistry } from '../../src/apps/appRegistry.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config, ConfigInput } from '../../src/config/schema.js';
import { requireContract, useZodSchemas } from '../../src/http/contract.js';
import { installErrorHandling } from '../../src/http/errorHandler.js';
import { loadSecrets } from '../../src/secrets.js';
import type { ClaimsCheck } from '../../src/sessions/claimsCheck.js';
import { cookieNames } from '../../src/sessions/cookies.js';
import { csrfToken } from '../../src/sessions/csrf.js';
import { sessionsArea } from '../../src/sessions/index.js';
import { NO_NOTES } from '../../src/operations/observe.js';
import { SessionResolver, type CurrentSession } from '../../src/sessions/sessionResolver.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { ChangeFeed } from '../../src/events/changes.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import type { ApiDeps } from '../../src/api/deps.js';
import { policySubject } from '../../src/authorize/policy.js';
import { portalReturnToPolicy } from '../../src/apps/returnTo.js';
import { OpStore } from '../../src/provide/opStore.js';

export const PORTAL = 'http://localhost:4180';

/** Claims are always current here: what an area does with a session, not how claims are re-checked. */
const currentClaims: ClaimsCheck = { isStale: () => false, refreshIfDue: async () => 'fresh' };

/**
 * One area registered alone, the way app.ts registers it, on a bare Fastify instance: the real stores
 * on an in-memory SQLite database, the sessions area (current session and the guard), zod schemas and
 * the leak guard, and the catalogue's error answers. No listening server, no IdP: `app.inject()`.
 */
export interface AreaHarness {
  app: FastifyInstance;
  config: Config;
  database: DatabaseHandle;
  accounts: AccountStore;
  sessions: SessionStore;
  audit: AuditLog;
  signInSettings: SignInSettingsStore;
  providers: ProviderRegistry;
  apps: AppRegistry;
  resolver: SessionResolver;
  changes: ChangeFeed;
  /** The OpenID Provider's grants (seeded with `recordGrant` where a test needs apps signed in with Gatehouse). */
  opStore: OpStore;
  /** The key the session-bound CSRF tokens are made with. */
  cookieKey: Buffer;
  groupsOf(current: CurrentSession): ReturnType<typeof sessionGroups>;
  isAdmin(current: CurrentSession): boolean;
  /** A signed-in person: their cookie header and the CSRF token of that session. */
  signIn(email: string, options?: { roles?: string[] }): Promise<Person>;
  close(): Promise<void>;
}

export interface Person {
  userId: string;
  sessionId: string;
  cookie: string;
  csrf: string;
  /** Headers of a same-origin state-changing request by this person. */
  changeHeaders: Record<string, string>;
}

/** The api area's dependencies as app.ts hands them in, on a harness's parts. */
export function apiAreaDeps(parts: Omit<AreaHarness, 'app' | 'close'>): ApiDeps {
  return {
    organizationName: () => parts.config.organization.name,
    providers: parts.providers,
    sessions: parts.sessions,
    accounts: parts.accounts,
    audit: parts.audit,
    apps: parts.apps,
    cookieKey: parts.cookieKey,
    returnToPolicy: () => portalReturnToPolicy({ portalOrigin: PORTAL, apps: parts.apps }),
    groupsOf: parts.groupsOf,
    isAdmin: parts.isAdmin,
    policySubjectOf: (current) => policySubject(parts.config.admins, current.user, parts.groupsOf(current)),
    grants: parts.opStore,
    // As services.ts builds it today (ending grants revokes them).
    endGrants: (filter, reason) => parts.opStore.revokeGrants(filter, reason),
  };
}

export async function areaHarness(input: ConfigInput, register: (harness: Omit<AreaHarness, 'app' | 'close'>, app: FastifyInstance) => Promise<void>): Promise<AreaHarness> {
  const config = parseConfig(
    {
      publicUrl: PORTAL,
      dataDir: '.',
      database: { path: ':memory:' },
      providers: [{ id: 'dev', name: 'Dev IdP', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y', trustGroups: true }],
      // Keys of its own, so nothing is written to disk.
      secrets: { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'test', key: randomBytes(32).toString('base64url') }] },
      ...input,
    },
    { env: {} },
  );
  const log = pino({ enabled: false });
  const database = await openDatabase(config, log);
  const secrets = loadSecrets(config);
  const accounts = new AccountStore(database.db);
  const changes = new ChangeFeed();
  const sessions = new SessionStore(database.db, createTokenCipher(secrets), config.session);
  sessions.onRevoke((revoked) => changes.publish({ type: 'sessions-ended', sessionIds: revoked.map((session) => session.id) }));
  const audit = new AuditLog(database.db);
  const signInSettings = new SignInSettingsStore(database.db);
  const providers = new ProviderRegistry(config.providers, log);
  const apps = new AppRegistry(config.apps);
  const resolver = new SessionResolver({ sessions, claims: currentClaims, providers, changes });
  const cookies = cookieNames(false);
  const groupsOf = (current: CurrentSession) => sessionGroups(providers, current);
  const isAdmin = (current: CurrentSession) => adminStatus(config.admins, current.user, groupsOf(current)).admin;

  const app = Fastify({ logger: false });
  installErrorHandling(app);
  useZodSchemas(app);
  requireContract(app);
  await app.register(cookie);
  await app.register(sessionsArea, { deps: { resolver, sessions, providerName: (id) => providers.name(id), cookies, portalOrigin: PORTAL, cookieKey: secrets.cookieKey, isAdmin, notes: NO_NOTES } });

  let people = 0;
  const parts = {
    config,
    database,
    accounts,
    sessions,
    audit,
    signInSettings,
    providers,
    apps,
    resolver,
    changes,
    opStore: new OpStore(database.db),
    cookieKey: secrets.cookieKey,
    groupsOf,
    isAdmin,
    async signIn(email: string, { roles = [] }: { roles?: string[] } = {}): Promise<Person> {
      const n = ++people;
      const now = Date.now();
      const userId = `u${n}`;
      const identityId = `i${n}`;
      await database.db
        .insertInto('users')
        .values({ id: userId, email, name: `Person ${n}`, picture: null, status: 'active', roles: JSON.stringify(roles), primary_identity_id: identityId, created_at: now, updated_at: now, last_sign_in_at: now })
        .execute();
      await database.db
        .insertInto('identities')
        .values({ id: identityId, user_id: userId, provider_id: 'dev', subject: `sub-${n}`, email, email_verified: 1, claims: '{}', linked_at: now, last_used_at: now })
        .execute();
      const { secret, session } = await sessions.create({ userId, identityId, providerId: 'dev' });
      const csrf = csrfToken(secrets.cookieKey, session);
      const cookieHeader = `${cookies.session}=${secret}`;
      return { userId, sessionId: session.id, cookie: cookieHeader, csrf, changeHeaders: { cookie: cookieHeader, origin: PORTAL, 'x-csrf-token': csrf } };
    },
  };
  await register(parts, app);
  await app.ready();
  return {
    ...parts,
    app,
    async close() {
      await app.close();
      providers.close();
      await database.close();
    },
  };
}
