import type { FastifyBaseLogger } from 'fastify';
import type { AppRegistry } from '../apps/appRegistry.js';
import type { AuditLog } from '../audit/auditLog.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { Db } from '../storage/database.js';
import { BackchannelDelivery, logoutClientsOf, type DeliveryOptions, type LogoutTokenSigner } from './backchannelDelivery.js';
import { LogoutDeliveryStore } from './logoutDeliveryStore.js';
import { SessionTies, type GrantEnder, type SessionTiesOptions } from './sessionTies.js';

/**
 * Back-channel logout to the OpenID Connect apps, put together: the outbox, this process's drain loop
 * and the ties between grants and Gatehouse sessions. The composition root builds one per process
 * (each worker of each node) and starts it; every part runs in every process, and the database keeps
 * them from doing anything twice.
 */
export interface BackchannelLogoutDeps {
  db: Db;
  /** Whose revocations end grants at once (`onRevoke`). */
  sessions: Pick<SessionStore, 'onRevoke'>;
  /** The app catalogue: which apps are OIDC clients, their back-channel URI and ID-token algorithm, now. */
  apps: Pick<AppRegistry, 'get' | 'all'>;
  audit: Pick<AuditLog, 'record'>;
  log: FastifyBaseLogger;
  /** The OP's issuer: the portal's origin. */
  issuer: string;
  /** Ends grants and deletes their codes and tokens (provide/opStore.ts `OpStore`). */
  grants: GrantEnder;
  /** Signs logout tokens with the OP's ID-token keys (`logoutTokenSigner` over keys/signingKeys.ts). */
  sign: LogoutTokenSigner;
}

export interface BackchannelLogout {
  /** The outbox, for the console's counts per app. */
  deliveries: LogoutDeliveryStore;
  /** For grants ended elsewhere (one app's access revoked): `ties.grantsEnded(grants, reason)` owes their logouts at once. */
  ties: SessionTies;
  start(): void;
  /** Stops the sweep and the drain loop; posts under way are let go for the next process. */
  stop(): Promise<void>;
}

export function backchannelLogout(deps: BackchannelLogoutDeps, options: { delivery?: Partial<DeliveryOptions>; ties?: Partial<SessionTiesOptions> } = {}): BackchannelLogout {
  const deliveries = new LogoutDeliveryStore(deps.db);
  const clients = logoutClientsOf(deps.apps);
  const delivery = new BackchannelDelivery({ store: deliveries, clients, sign: deps.sign, issuer: deps.issuer, audit: deps.audit, log: deps.log }, options.delivery);
  const ties = new SessionTies({ sessions: deps.sessions, grants: deps.grants, outbox: deliveries, clients, delivery, log: deps.log }, options.ties);
  return {
    deliveries,
    ties,
    start() {
      delivery.start();
      ties.start();
    },
    async stop() {
      await ties.stop();
      await delivery.stop();
    },
  };
}
