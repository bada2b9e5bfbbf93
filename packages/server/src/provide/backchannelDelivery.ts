import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { SignJWT, type CryptoKey } from 'jose';
import { Agent, request } from 'undici';
import type { AppRegistry } from '../apps/appRegistry.js';
import type { AuditLog } from '../audit/auditLog.js';
import { guardedConnector, RefusedAddressError, type Resolve } from './outgoingAddress.js';
import { DEFAULT_RETRY_POLICY, type ClaimedDelivery, type LogoutDeliveryStore, type RetryPolicy } from './logoutDeliveryStore.js';

/**
 * Back-channel logout to the apps (OpenID Connect Back-Channel Logout 1.0): the drain loop that posts
 * the logout tokens the outbox owes (provide/logoutDeliveryStore.ts). It runs in every process — each
 * worker of each node —, claims due deliveries with a compare-and-set, so a token is never posted by
 * two at once, and retries with backoff until the app answers 2xx or the retries run out. Each delivery
 * and each abandonment is audited; no token is ever logged, stored or audited.
 */

/** The event a logout token carries (§2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The `typ` of a logout token's header (§2.4: explicit typing, so no other JWT passes as one). */
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';

export type IdTokenAlgorithm = 'RS256' | 'ES256';

/** What a logout token says (§2.4): no nonce, ever (it would let it pass as an ID token). */
export interface LogoutTokenClaims {
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  sub: string;
  sid: string;
  events: { [BACKCHANNEL_LOGOUT_EVENT]: Record<string, never> };
}

/**
 * Signs a logout token: a JWS over `claims` with the header `{ alg, kid, typ: 'logout+jwt' }`, with
 * the OP's ID-token key for `alg` (the algorithm the client receives its ID tokens in, so it verifies
 * the logout token against the keys it already trusts). The composition root provides it.
 */
export type LogoutTokenSigner = (claims: LogoutTokenClaims, alg: IdTokenAlgorithm) => Promise<string>;

/** A signing key as keys/signingKeys.ts keeps one (`current()`). */
export interface ActiveSigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/** A LogoutTokenSigner over the active ID-token key of each algorithm, with jose. */
export function logoutTokenSigner(keyFor: (alg: IdTokenAlgorithm) => ActiveSigningKey | Promise<ActiveSigningKey>): LogoutTokenSigner {
  return async (claims, alg) => {
    const { kid, privateKey } = await keyFor(alg);
    return new SignJWT({ ...claims }).setProtectedHeader({ alg, kid, typ: LOGOUT_TOKEN_TYPE }).sign(privateKey);
  };
}

/** What delivery reads of an app registered as an OIDC client, now (a console edit applies at once). */
export interface LogoutClient {
  appId: string;
  name: string;
  clientId: string;
  /** Where it receives logout tokens; absent: it receives none. */
  backchannelLogoutUri: string | undefined;
  idTokenAlgorithm: IdTokenAlgorithm;
}

export interface LogoutClients {
  client(appId: string): LogoutClient | undefined;
  /** The apps that receive logout tokens. */
  withBackchannel(): string[];
}

/** The OIDC clients of the app catalogue, as delivery reads them. */
export function logoutClientsOf(apps: Pick<AppRegistry, 'get' | 'all'>): LogoutClients {
  const toClient = (appId: string): LogoutClient | undefined => {
    const app = apps.get(appId);
    if (!app?.oidc) return undefined;
    return {
      appId: app.id,
      name: app.name,
      clientId: app.oidc.clientId ?? app.id,
      backchannelLogoutUri: app.oidc.backchannelLogoutUri,
      idTokenAlgorithm: app.oidc.idTokenAlgorithm,
    };
  };
  return {
    client: toClient,
    withBackchannel: () => apps.all().filter((app) => app.oidc?.backchannelLogoutUri !== undefined).map((app) => app.id),
  };
}

export interface DeliveryOptions {
  /** The whole exchange with the app (connect, headers, body), ms. */
  timeout: number;
  /** How long a claim holds a delivery (ms): far longer than `timeout`, so it never runs out mid-post. */
  lease: number;
  /** Deliveries claimed at once. */
  batch: number;
  /** Posts under way at once. */
  concurrency: number;
  /** How often the loop looks for due deliveries when nothing wakes it (ms): retries and other nodes' leftovers. */
  interval: number;
  /** A logout token's lifetime (s): short, it is used at once. */
  tokenLifetime: number;
  retry: RetryPolicy;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  timeout: 5_000,
  lease: 60_000,
  batch: 20,
  concurrency: 8,
  interval: 5_000,
  tokenLifetime: 120,
  retry: DEFAULT_RETRY_POLICY,
};

export interface BackchannelDeliveryDeps {
  store: Pick<LogoutDeliveryStore, 'claimDue' | 'recordDelivered' | 'recordFailed' | 'abandon' | 'release'>;
  clients: LogoutClients;
  sign: LogoutTokenSigner;
  /** The OP's issuer: the portal's origin. */
  issuer: string;
  audit: Pick<AuditLog, 'record'>;
  log: FastifyBaseLogger;
  now?: () => number;
  /** How names are resolved before the guard judges their addresses (the system's resolver unless told). */
  resolve?: Resolve;
}

/** What a post came to: the app took the token (2xx), or what went wrong, in words without the token. */
export type PostOutcome = { ok: true } | { ok: false; error: string };

/**
 * Posts a logout token to an app's registered URI (§2.5): a form with `logout_token`, no redirect
 * followed (a 3xx is a failure: the token goes only where the app registered), on a dispatcher whose
 * every connection passes the address guard.
 */
export async function postLogoutToken(dispatcher: Agent, uri: string, token: string, timeout: number, signal?: AbortSignal): Promise<PostOutcome> {
  const deadline = AbortSignal.timeout(timeout);
  try {
    const response = await request(uri, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: '*/*' },
      body: new URLSearchParams({ logout_token: token }).toString(),
      signal: signal ? AbortSignal.any([deadline, signal]) : deadline,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    // The body is never read into anything: an app could echo the token back.
    await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true };
    return { ok: false, error: `the app answered HTTP ${response.statusCode}` };
  } catch (error) {
    return { ok: false, error: describeError(error, deadline.aborted) };
  }
}

/** A failure in words: the error's code and message (they name an address at most, never the request's body). */
function describeError(error: unknown, timedOut: boolean): string {
  if (timedOut) return 'no answer in time';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof RefusedAddressError) return cause.message;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return 'the request failed';
}

export class BackchannelDelivery {
  private readonly options: DeliveryOptions;
  private readonly now: () => number;
  /** The connections to the apps, every one through the address guard; made at first use, closed by stop(). */
  private dispatcher: Agent | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  /** Aborts the posts under way when the loop stops. */
  private stopping = new AbortController();

  constructor(
    private readonly deps: BackchannelDeliveryDeps,
    options: Partial<DeliveryOptions> = {},
  ) {
    this.options = { ...DEFAULT_DELIVERY_OPTIONS, ...options };
    this.now = deps.now ?? Date.now;
  }

  /** Starts the loop: a first look soon (at a random moment within the interval, so workers spread), then every interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.schedule(Math.round(Math.random() * this.options.interval));
  }

  /** Something was enqueued here: look now, rather than at the next interval. */
  wake(): void {
    if (!this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** Stops the loop: posts under way are cut short and their deliveries released for the next process. */
  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.running;
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    await dispatcher?.close();
  }

  private agent(): Agent {
    this.dispatcher ??= new Agent({
      connect: guardedConnector({ timeout: this.options.timeout, resolve: this.deps.resolve }),
      headersTimeout: this.options.timeout,
      bodyTimeout: this.options.timeout,
      connections: this.options.concurrency,
    });
    return this.dispatcher;
  }

  /** Delivers what is due now, batch after batch; resolves to how many deliveries it took on. For tests and the loop. */
  async drain(): Promise<number> {
    let handled = 0;
    for (;;) {
      if (this.stopping.signal.aborted) return handled;
      const claims = await this.deps.store.claimDue(this.options.batch, this.options.lease);
      handled += claims.length;
      await this.deliverAll(claims);
      if (claims.length < this.options.batch) return handled;
    }
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), delay);
    this.timer.unref();
  }

  private tick(): void {
    if (!this.started || this.running) return;
    this.again = false;
    this.running = this.drain()
      .then(
        () => undefined,
        (error: unknown) => this.deps.log.error({ err: error }, 'back-channel logout: the outbox could not be read; trying again shortly'),
      )
      .finally(() => {
        this.running = undefined;
        if (this.started) this.schedule(this.again ? 0 : this.options.interval);
      });
  }

  private async deliverAll(claims: ClaimedDelivery[]): Promise<void> {
    const queue = [...claims];
    /** Apps whose post failed in this batch: their other deliveries wait for the backoff rather than each waiting out a timeout. */
    const failing = new Map<string, string>();
    const worker = async () => {
      for (let claim = queue.shift(); claim; claim = queue.shift()) {
        try {
          await this.deliverOne(claim, failing);
        } catch (error) {
          // The database did not answer: the claim runs out and the delivery is tried again then.
          this.deps.log.error({ err: error, app: claim.appId }, 'back-channel logout: an outcome could not be recorded');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, claims.length) }, worker));
  }

  private async deliverOne(claim: ClaimedDelivery, failing: Map<string, string>): Promise<void> {
    const { store, clients, log } = this.deps;
    if (this.stopping.signal.aborted) {
      await store.release(claim);
      return;
    }
    // The app as it is registered now: its URI, its client id, its algorithm. Never a URI from elsewhere.
    const client = clients.client(claim.appId);
    const uri = client?.backchannelLogoutUri;
    if (!client || !uri) {
      const why = client ? 'the app no longer has a back-channel logout URI' : 'the app is no longer an OpenID Connect client';
      if (await store.abandon(claim, why)) await this.auditAbandoned(claim, client, claim.attempts, why);
      return;
    }
    // A claim about to run out is left for the next look: another node may take it over at its end,
    // and the same token must never be posted by two at once.
    if (this.now() + this.options.timeout + 1_000 >= claim.claimedUntil) {
      await store.release(claim);
      return;
    }
    const earlier = failing.get(claim.appId);
    const outcome: PostOutcome = earlier
      ? { ok: false, error: `not tried: ${earlier}` }
      : await this.sign(claim, client).then(
          (token) => postLogoutToken(this.agent(), uri, token, this.options.timeout, this.stopping.signal),
          (error: unknown) => {
            log.error({ err: error, app: claim.appId }, 'back-channel logout: the logout token could not be signed');
            return { ok: false, error: 'the logout token could not be signed' } as const;
          },
        );
    if (this.stopping.signal.aborted && !outcome.ok) {
      // Cut short by the stop: not the app's failure. The next process tries again at once.
      await store.release(claim);
      return;
    }
    if (outcome.ok) {
      if (await store.recordDelivered(claim)) {
        log.info({ app: claim.appId, attempts: claim.attempts + 1 }, 'back-channel logout delivered');
        await this.deps.audit.record({
          type: 'oidc_logout_delivered',
          targetUserId: claim.userId,
          sessionId: claim.sessionId,
          appId: claim.appId,
          details: { app: { id: client.appId, name: client.name }, attempts: claim.attempts + 1, reason: claim.reason },
        });
      }
      return;
    }
    if (!earlier) failing.set(claim.appId, outcome.error);
    const failed = await store.recordFailed(claim, outcome.error, this.options.retry);
    if (failed.outcome === 'retry') {
      log.warn({ app: claim.appId, attempts: failed.attempts, error: outcome.error, retryAt: new Date(failed.nextAttemptAt).toISOString() }, 'back-channel logout failed; it will be tried again');
    } else if (failed.outcome === 'abandoned') {
      await this.auditAbandoned(claim, client, failed.attempts, outcome.error);
    }
  }

  private sign(claim: ClaimedDelivery, client: LogoutClient): Promise<string> {
    const iat = Math.floor(this.now() / 1000);
    return this.deps.sign(
      {
        iss: this.deps.issuer,
        aud: client.clientId,
        iat,
        exp: iat + this.options.tokenLifetime,
        jti: randomUUID(),
        sub: claim.subject,
        sid: claim.sid,
        events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
      },
      client.idTokenAlgorithm,
    );
  }

  private async auditAbandoned(claim: ClaimedDelivery, client: LogoutClient | undefined, attempts: number, error: string): Promise<void> {
    this.deps.log.warn({ app: claim.appId, attempts, error }, 'back-channel logout abandoned: the app was not told of the logout');
    await this.deps.audit.record({
      type: 'oidc_logout_failed',
      outcome: 'failure',
      targetUserId: claim.userId,
      sessionId: claim.sessionId,
      appId: claim.appId,
      details: { app: { id: claim.appId, name: client?.name ?? claim.appId }, attempts, reason: claim.reason, error },
    });
  }
}
