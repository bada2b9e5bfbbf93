import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { originOf, type AppRegistry } from '../apps/appRegistry.js';
import { checkAccess, type AccessDeps, type AccessResult } from '../authorize/checkAccess.js';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import { clientAddressOfPeer } from '../http/trustedProxies.js';
import { cookieValue, type CookieNames } from '../sessions/cookies.js';
import type { ResolveContext } from '../sessions/sessionResolver.js';
import type { ChangeFeed } from '../events/changes.js';

/** Why a live answer is ended, as WebSocket close codes (RFC 6455 §7.4.1). */
export const LIVE_END = {
  /** Its access ended: the session was revoked or expired, or the policy no longer allows the user. */
  policy: 1008,
  /** The app was removed, or no longer takes this kind of answer. */
  goingAway: 1001,
  /** Its access could not be checked (fail closed). */
  checkFailed: 1011,
} as const;

/** What keeping answers to their access takes: the access check, and what tells of revocations and app changes. */
export interface LiveAccessDeps extends AccessDeps {
  running: InForce<Pick<Config, 'admins' | 'trustedProxies'> & { session: Pick<Config['session'], 'touchInterval'> }>;
  cookies: Pick<CookieNames, 'appSession'>;
  /** Sessions ended or changed, here or on another worker or node. */
  changes: Pick<ChangeFeed, 'subscribe'>;
  apps: Pick<AppRegistry, 'guarded' | 'onChange'>;
}

export type EndLive = (code: number, reason: string) => void;

/** What a request brings to an access check: the app host's token, and who is asking. */
export interface RequestAccess {
  token: string | undefined;
  context: ResolveContext;
}

/** An answer to keep to its access: what it was let through on. */
export interface LiveAnswer extends RequestAccess {
  app: AppConfig;
  path: string;
  /** The session it was allowed for; undefined on a public path. */
  sessionId: string | undefined;
  kind: 'websocket' | 'stream';
}

interface Live extends Omit<LiveAnswer, 'app'> {
  appId: string;
  end: EndLive;
}

/**
 * Answers that outlive their request — bridged WebSockets, and proxied answers of unknown length (event
 * streams, long polls) — answer to the access that let them through for as long as they last, not only
 * when they start: a revocation of their session ends them at once; a change to the apps checks every
 * one again at once; and each is checked again once per touch interval (`session.touchInterval`), which
 * ends it when its session has expired, its user is disabled, or the policy no longer allows them. Like a
 * request, that check records the session's activity: an open stream is use.
 */
export class LiveAccess {
  private readonly all = new Set<Live>();
  private readonly bySession = new Map<string, Set<Live>>();
  private readonly clientAddress: (remoteAddress: string | undefined, headers: IncomingMessage['headers']) => string | undefined;
  private readonly timer: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly deps: LiveAccessDeps,
    private readonly log: FastifyBaseLogger,
  ) {
    this.clientAddress = clientAddressOfPeer(deps.running.current.trustedProxies);
    deps.changes.subscribe((change) => {
      if (change.type === 'sessions-ended') {
        for (const id of change.sessionIds) for (const live of [...(this.bySession.get(id) ?? [])]) this.end(live, LIVE_END.policy, 'session ended');
      } else if (change.type === 'sessions-changed' || change.type === 'everything') {
        // Roles or groups changed, or changes may have been missed: what is open answers to its access again.
        void this.recheckAll();
      }
    });
    // An app removed, or its policy or WebSocket switch changed in the console: what is open answers to that at once.
    deps.apps.onChange(() => void this.recheckAll());
    this.timer = setInterval(() => {
      if (this.checking || this.all.size === 0) return;
      this.checking = true;
      void this.recheckAll().finally(() => (this.checking = false));
    }, deps.running.current.session.touchInterval);
    this.timer.unref();
  }

  /**
   * The token and the asker of a request, as an access check takes them. `remoteAddress` is the peer's,
   * for a request that may have let go of its socket already.
   */
  accessOf(request: IncomingMessage, remoteAddress = request.socket?.remoteAddress): RequestAccess {
    return {
      token: cookieValue(request.headers.cookie, this.deps.cookies.appSession),
      context: { log: this.log, ip: this.clientAddress(remoteAddress, request.headers), headers: request.headers },
    };
  }

  /**
   * Keeps an answer to its access while it lasts. `end` closes it; it is called at most once, and never
   * after the returned function (for an answer that ended by itself) was called.
   */
  track({ app, ...answer }: LiveAnswer, end: EndLive): () => void {
    const live: Live = { ...answer, appId: app.id, end };
    const { sessionId } = live;
    this.all.add(live);
    if (sessionId !== undefined) {
      let forSession = this.bySession.get(sessionId);
      if (!forSession) this.bySession.set(sessionId, (forSession = new Set()));
      forSession.add(live);
    }
    return () => void this.forget(live);
  }

  /**
   * The process is stopping: checks stop, and open WebSockets are told Gatehouse is going away. Streams
   * are left to finish (cli/start.ts bounds how long).
   */
  close(): void {
    clearInterval(this.timer);
    for (const live of [...this.all]) if (live.kind === 'websocket') this.end(live, LIVE_END.goingAway, 'Gatehouse is shutting down');
  }

  private forget(live: Live): boolean {
    if (!this.all.delete(live)) return false;
    if (live.sessionId === undefined) return true;
    const forSession = this.bySession.get(live.sessionId);
    forSession?.delete(live);
    if (forSession?.size === 0) this.bySession.delete(live.sessionId);
    return true;
  }

  private end(live: Live, code: number, reason: string): void {
    if (this.forget(live)) live.end(code, reason);
  }

  private recheckAll(): Promise<void> {
    return Promise.all([...this.all].map((live) => this.recheck(live))).then(
      () => undefined,
      (error: unknown) => this.log.error({ err: error }, 'checking open answers failed'),
    );
  }

  private async recheck(live: Live): Promise<void> {
    const app = this.deps.apps.guarded(live.appId);
    if (!app || (live.kind === 'websocket' && !app.websockets)) return this.end(live, LIVE_END.goingAway, app ? 'the app no longer takes WebSockets here' : 'the app was removed');
    let result: AccessResult;
    try {
      result = await checkAccess(this.deps, live.context, { app, appOrigin: originOf(app), method: 'GET', path: live.path, token: live.token, preflight: false });
    } catch (error) {
      // Fail closed: an answer whose access cannot be confirmed is not kept open.
      this.log.warn({ err: error, app: app.id }, 'could not check an open answer again: ending it');
      return this.end(live, LIVE_END.checkFailed, 'access could not be checked');
    }
    const still = result.kind === 'allowed' ? result.current.session.id === live.sessionId : result.kind === 'public' && live.sessionId === undefined;
    if (!still) this.end(live, LIVE_END.policy, result.kind === 'denied' ? 'access denied' : result.kind === 'unauthenticated' ? 'session ended' : 'access changed');
  }
}
