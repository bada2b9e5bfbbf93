import type { IncomingMessage, ServerResponse } from 'node:http';

import Provider from 'oidc-provider';

import { controlRoutes } from './controlRoutes.js';
import { builtInUserSets, defaultUsers, type DevIdpUser } from './defaultUsers.js';
import { htmlPage, sendHtml } from './htmlPage.js';
import { interactionRoutes } from './interactionRoutes.js';
import { listenLoopback } from './listenLoopback.js';
import { loadOrCreateKeys } from './loadOrCreateKeys.js';
import { providerConfiguration, type DevIdpClient } from './providerConfiguration.js';
import { BodyTooLargeError } from './readBody.js';
import { UserDirectory } from './UserDirectory.js';

export interface DevIdpOptions {
  port: number;
  /** Default `localhost`, which listens on 127.0.0.1 and ::1. */
  host?: string;
  /** Default `http://<host>:<port>`. Must be an origin: the provider is served at the root. */
  issuer?: string;
  /** Shown on every page. Default "Development IdP". */
  name?: string;
  /** Default {@link defaultUsers}. */
  users?: readonly DevIdpUser[];
  clients: DevIdpClient[];
  /** Prefix of every cookie name, so dev IdPs on other ports of localhost keep apart. Default `devidp`. */
  cookiePrefix?: string;
  /** Where signing and cookie keys are kept across restarts. Without it, keys are new on every start. */
  dataDir?: string;
  /** Enables the `/__control/` API for tests (see controlRoutes.ts). */
  controlToken?: string;
  /** Seconds. Default 600. */
  accessTokenTtl?: number;
  /** Seconds. Default 3600. */
  idTokenTtl?: number;
  /** Seconds. Default 14 days. */
  refreshTokenTtl?: number;
}

export interface DevIdp {
  issuer: string;
  close(): Promise<void>;
  /** Changes the groups of a user from now on (userinfo, new ID tokens, refresh). Throws for an unknown login. */
  setUserGroups(login: string, groups: string[]): void;
}

const COOKIE_NAME = /^[A-Za-z0-9_-]+$/;

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function checkIssuer(issuer: string): void {
  const url = new URL(issuer);
  if (url.origin !== issuer.replace(/\/$/, '')) {
    throw new Error(`dev-idp: issuer must be an origin such as http://localhost:4181, got ${issuer}`);
  }
}

/** Starts a development OpenID Provider: a real, separate OP with a login form, for development and tests. */
export async function startDevIdp(opts: DevIdpOptions): Promise<DevIdp> {
  const host = opts.host ?? 'localhost';
  const idpName = opts.name ?? 'Development IdP';
  const cookiePrefix = opts.cookiePrefix ?? 'devidp';
  if (!COOKIE_NAME.test(cookiePrefix)) throw new Error(`dev-idp: cookiePrefix must match ${COOKIE_NAME}`);
  if (opts.issuer !== undefined) checkIssuer(opts.issuer);
  const users = new UserDirectory(opts.users ?? defaultUsers);
  const keys = await loadOrCreateKeys(opts.dataDir);

  const listening = await listenLoopback(host, opts.port);
  const issuer = opts.issuer ?? `http://${urlHost(host)}:${listening.port}`;
  let provider: Provider;
  try {
    provider = new Provider(
      issuer,
      providerConfiguration({
        idpName,
        users,
        clients: opts.clients,
        keys,
        cookiePrefix,
        ttl: {
          accessToken: opts.accessTokenTtl ?? 600,
          idToken: opts.idTokenTtl ?? 3600,
          refreshToken: opts.refreshTokenTtl ?? 14 * 24 * 60 * 60,
        },
      }),
    );
  } catch (error) {
    await listening.close();
    throw error;
  }

  // A failed back-channel logout is otherwise silent; the relying party would keep its session.
  provider.on('backchannel.error', (_ctx, error, client) => {
    console.error(`dev-idp: back-channel logout to ${client.clientId} failed: ${error.message}`);
  });
  provider.on('server_error', (_ctx, error) => console.error('dev-idp: server error', error));

  const handleInteraction = interactionRoutes({
    provider,
    users,
    idpName,
    // Listing passwords is only acceptable for the well-known built-in accounts.
    // Only built-in demo accounts are ever listed on the login page, never configured ones.
    accountHint: Object.values(builtInUserSets).find((set) => set === (opts.users ?? defaultUsers)),
  });
  const handleControl = opts.controlToken ? controlRoutes(opts.controlToken, users) : undefined;
  const handleProvider = provider.callback();

  listening.serve((req: IncomingMessage, res: ServerResponse) => {
    (async () => {
      const pathname = new URL(req.url ?? '/', issuer).pathname;
      if (await handleInteraction(req, res, pathname)) return;
      if (handleControl && (await handleControl(req, res, pathname))) return;
      await handleProvider(req, res);
    })().catch((error: unknown) => {
      const tooLarge = error instanceof BodyTooLargeError;
      if (!tooLarge) console.error('dev-idp: request failed', error);
      if (res.headersSent) return void res.destroy();
      sendHtml(res, tooLarge ? 413 : 500, htmlPage(idpName, '<p>Something went wrong.</p>'));
    });
  });

  return {
    issuer,
    close: () => listening.close(),
    setUserGroups: (login, groups) => users.setGroups(login, groups),
  };
}
