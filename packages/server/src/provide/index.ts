import { oidcEndpoints } from '@gatehouse/contract';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import Provider, { errors, type AdapterFactory, type JWK, type KoaContextWithOIDC } from 'oidc-provider';
import type { Metrics, OidcStep } from '../operations/metrics.js';
import type { RequestNotes } from '../operations/observe.js';
import type { ChangeFeed } from '../events/changes.js';
import { limitCounter, type CountedLimits } from '../limits/limitCounter.js';
import type { CookieNames } from '../sessions/cookies.js';
import { noteAccess, type GrantLedger, type ProvideAccessDeps } from './access.js';
import { recordGrants } from './grants.js';
import { ClientAuthLimit, TOO_MANY_FAILURES } from './clientAuthLimit.js';
import { compareClientSecret, type OidcClientCatalogue } from './clients.js';
import { opConfiguration, type ProvideRequest } from './configuration.js';
import { consentRoutes } from './consent.js';
import { loginStep } from './login.js';
import { endGatehouseSessionOnLogout, type EndGatehouseSession } from './logout.js';
import type { LogoutContinuations } from './logoutContinuation.js';
import { mountProvider, requests } from './mount.js';
import { housePages } from './pages.js';

/** What the OpenID Provider's door takes (the composition root builds it from Services). */
export interface ProvideDeps extends ProvideAccessDeps {
  clients: OidcClientCatalogue;
  portalOrigin: string;
  secureCookies: boolean;
  cookies: Pick<CookieNames, 'chooseAccount' | 'signOutState' | 'logoutContinuation'>;
  /** RP-initiated logout ends the Gatehouse session as signing out does, at the IdP too (provide/logout.ts). */
  endSession: EndGatehouseSession;
  /** The way back to the app after the IdP's logout (provide/logoutContinuation.ts), redeemed at /signed-out. */
  continuations: Pick<LogoutContinuations, 'issue'>;
  /** The server's key (secrets.cookieKey): the OP's cookie, pairwise and placeholder keys derive from it. */
  secretKey: Buffer;
  /** The ID token keys (keys/signingKeys.ts, purposes id-token-rs256 and id-token-es256). */
  idTokenKeys: ReadonlyArray<{ privateJwks(): Promise<JWK[]>; load(): Promise<void>; nextChangeAt(): Promise<number | undefined> }>;
  /** oidc-provider's adapter for its models (provide/adapter.ts). */
  adapter: AdapterFactory;
  /** A key rotation anywhere (signing-keys-changed) builds a new provider here. */
  changes: Pick<ChangeFeed, 'subscribe'>;
  attemptLifetime(): number;
  log: FastifyBaseLogger;
  metrics: Pick<Metrics, 'oidc'>;
  /** What the access log says of each request (operations/observe.ts): the client's app, the policy's decision. */
  notes: RequestNotes;
  /** Where each grant is recorded with its Gatehouse session (provide/opStore.ts), for ending it with the session. */
  grants: GrantLedger;
  /** Where failed client authentications are counted (Redis, or the node's primary); undefined: in this process alone. */
  limits?: CountedLimits | undefined;
}

/** The events oidc-provider emits for each counted step (`<prefix>.success`, `<prefix>.error`). */
const OIDC_EVENTS: Record<OidcStep, string> = {
  authorization: 'authorization',
  token: 'grant',
  userinfo: 'userinfo',
  introspection: 'introspection',
  revocation: 'revocation',
  par: 'pushed_authorization_request',
  logout: 'end_session',
};

/** oidc-provider's errors that mean a client failed to authenticate. */
const isClientAuthFailure = (error: unknown) => error instanceof errors.InvalidClient || error instanceof errors.InvalidClientAuth;
/** The steps where a client authenticates: their failures count against the address (provide/clientAuthLimit.ts). */
const CLIENT_AUTH_STEPS: ReadonlySet<OidcStep> = new Set(['token', 'introspection', 'revocation', 'par']);

/**
 * Builds the provider from the keys as they are in the database. oidc-provider fixes its keys when it
 * is constructed, so a rotation (`signing-keys-changed`, from this process or any worker or node)
 * builds a new one, which answers from the next request on; requests under way finish on the old one.
 */
export async function buildProvider(deps: ProvideDeps, limit: ClientAuthLimit): Promise<Provider> {
  const signingJwks = (await Promise.all(deps.idTokenKeys.map((keys) => keys.privateJwks()))).flat();
  const pages = housePages(deps.log, () => requests.getStore()?.id);
  const configuration = opConfiguration({
    ...deps,
    signingJwks,
    request: (): ProvideRequest | undefined => {
      const request = requests.getStore();
      return (
        request && {
          currentSession: () => request.currentSession(),
          ip: request.ip,
          headers: request.headers,
          decided: (app, outcome, current) => noteAccess(deps.notes, request.raw, app, outcome, current),
        }
      );
    },
    pages,
  });
  const provider = new Provider(deps.portalOrigin, configuration);
  // Koa believes forwarded headers only with this on; provide/forwarded.ts writes every one of them.
  provider.proxy = true;
  // The presented secret is checked against the app's live secret hashes (provide/clients.ts).
  const clients = deps.clients;
  provider.Client.prototype.compareClientSecret = function compare(this: { clientId: string }, actual: string) {
    return compareClientSecret(clients, this.clientId, actual);
  } as never;
  const appIdOf = (clientId: string | undefined) => (clientId ? deps.clients.client(clientId)?.app.id : undefined);
  // Logout tokens are posted from the outbox when the Gatehouse session ends (provide/backchannelDelivery.ts:
  // from any node, retried, audited), never by oidc-provider from this process's memory: its own post
  // at an RP-initiated logout would be a second, unrecorded one. Its feature stays on for what it
  // advertises and accepts (backchannel_logout_uri, the sid in ID tokens).
  provider.Client.prototype.backchannelLogout = async function outbox() {} as never;
  // The access log's app for each of its answers: the app whose client the request named, once
  // oidc-provider found it (a client authentication that failed too: which app's client was tried).
  provider.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      const app = appIdOf(ctx.oidc?.client?.clientId);
      if (app) deps.notes.app(ctx.req, app);
    }
  });
  // Counted per step, client (only clients of the catalogue: the labels stay bounded) and outcome.
  const clientOf = (ctx: KoaContextWithOIDC | undefined) => {
    const id = ctx?.oidc?.client?.clientId;
    return id && deps.clients.client(id) ? id : '';
  };
  const on = (event: string, listener: (ctx: KoaContextWithOIDC | undefined, error?: unknown) => void) =>
    (provider.on as (name: string, listener: (...args: never[]) => void) => unknown).call(provider, event, listener);
  // A failed client authentication is counted before its answer leaves (provide/clientAuthLimit.ts):
  // the event marks the request, and this middleware, around oidc-provider's, awaits the count once
  // the error is written. Past the budget, the answer is the 429 instead (the same as mount.ts gives
  // an address already refused), whichever process counted the failures before.
  const failedClientAuth = new WeakSet<object>();
  provider.use(async (ctx, next) => {
    await next();
    if (!failedClientAuth.has(ctx)) return;
    let retryAfter: number | undefined;
    try {
      retryAfter = await limit.failed(requests.getStore()?.ip ?? ctx.ip);
    } catch (error) {
      // Not expected (the count falls back to this process's own): the failure's own answer stands.
      deps.log.error({ err: error }, 'could not count a failed client authentication');
    }
    if (retryAfter === undefined) return;
    ctx.status = 429;
    ctx.remove('www-authenticate');
    ctx.set('retry-after', String(retryAfter));
    ctx.set('cache-control', 'no-store');
    ctx.body = TOO_MANY_FAILURES;
  });
  for (const [step, prefix] of Object.entries(OIDC_EVENTS) as Array<[OidcStep, string]>) {
    on(`${prefix}.success`, (ctx) => deps.metrics.oidc(step, clientOf(ctx), 'success'));
    on(`${prefix}.error`, (ctx, error) => {
      const code = error instanceof errors.OIDCProviderError ? error.error : 'server_error';
      deps.metrics.oidc(step, clientOf(ctx), code);
      if (ctx && CLIENT_AUTH_STEPS.has(step) && isClientAuthFailure(error)) failedClientAuth.add(ctx);
      deps.log.info({ step, client: clientOf(ctx), error: code, description: error instanceof errors.OIDCProviderError ? error.error_description : undefined }, 'OpenID Provider refused a request');
    });
  }
  recordGrants(provider, deps.grants, deps.clients, (ctx, sub, client) => configuration.pairwiseIdentifier!(ctx, sub, client));
  endGatehouseSessionOnLogout(provider, {
    endSession: deps.endSession,
    continuations: deps.continuations,
    cookies: deps.cookies,
    secureCookies: deps.secureCookies,
    request: () => requests.getStore(),
    appIdOf,
  });
  provider.on('server_error', (_ctx: unknown, error: unknown) => deps.log.error({ err: error }, 'OpenID Provider failed'));
  return provider;
}

/**
 * The OpenID Provider's door: discovery and /oidc/* to oidc-provider (provide/mount.ts), the login step
 * (provide/login.ts), the provider rebuilt after every ID token key rotation.
 */
export const provideArea = fp(
  async (app: FastifyInstance, { deps }: { deps: ProvideDeps }) => {
    // One count for every provider built here (a key rotation builds a new one), in Redis or the primary when there is one.
    const limit = new ClientAuthLimit(limitCounter(deps.limits, 'client-auth'));
    for (const keys of deps.idTokenKeys) await keys.load();
    let provider = await buildProvider(deps, limit);
    // A next key begins to sign at a time written in the database: each process rebuilds its provider
    // at that moment, so every worker and node switches together without hearing anything.
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    const scheduleNextSwitch = async () => {
      const times = (await Promise.all(deps.idTokenKeys.map((keys) => keys.nextChangeAt()))).filter((at): at is number => at !== undefined);
      clearTimeout(timer);
      if (times.length === 0) return;
      // setTimeout takes at most about 24.8 days: a later switch is looked at again then.
      timer = setTimeout(rebuild, Math.min(Math.max(0, Math.min(...times) - Date.now()) + 10, 2 ** 31 - 1));
      timer.unref();
    };
    const rebuild = () => {
      if (closed) return;
      void Promise.all(deps.idTokenKeys.map((keys) => keys.load()))
        .then(() => buildProvider(deps, limit))
        .then(async (rebuilt) => {
          provider = rebuilt;
          await scheduleNextSwitch();
        })
        .catch((error: unknown) => {
          deps.log.error({ err: error }, 'could not rebuild the OpenID Provider with the new keys; the old ones sign until it can');
          timer = setTimeout(rebuild, 5_000).unref();
        });
    };
    await scheduleNextSwitch();
    app.addHook('onClose', async () => {
      closed = true;
      clearTimeout(timer);
    });
    deps.changes.subscribe((change) => {
      if (change.type === 'signing-keys-changed' || change.type === 'everything') rebuild();
    });
    app.get(oidcEndpoints.interaction, loginStep({ ...deps, provider: () => provider }));
    consentRoutes(app, { provider: () => provider, clients: deps.clients, audit: deps.audit, notes: deps.notes });
    mountProvider(app, { provider: () => provider, portalOrigin: deps.portalOrigin, clientAuthLimit: limit, strictTransportSecurity: deps.secureCookies });
  },
  { name: 'gatehouse-provide', dependencies: ['gatehouse-session'] },
);
