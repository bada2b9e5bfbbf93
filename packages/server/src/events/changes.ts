/**
 * What changed in the state every worker and every node shares, as each of them must hear of it: the
 * stores publish a change once it is written, and whatever keeps a copy of that state in memory (the
 * session cache, cached assertions, open WebSockets, the app and provider registries, the signing
 * keys) subscribes. A change made here is delivered here at once; a transport carries it to the other
 * workers of this node and to the other nodes, and delivers theirs as changes from elsewhere.
 */
export type Change =
  /** Sessions that ended (sign-out, revocation, suspension, back-channel logout, a failed refresh). */
  | { type: 'sessions-ended'; sessionIds: string[] }
  /** Sessions still valid whose user or claims changed (roles, groups): cached views must be read again. */
  | { type: 'sessions-changed'; sessionIds: string[] }
  /** The console's apps or their policies. */
  | { type: 'apps-changed' }
  /** The console's identity providers. */
  | { type: 'providers-changed' }
  /** The assertion signing keys (a rotation). */
  | { type: 'signing-keys-changed' }
  /**
   * Some changes may have been missed (a transport's connection dropped): drop every cached copy and
   * read everything again, so that a lost notification never leaves a stale allow.
   */
  | { type: 'everything' };

export type ChangeOrigin = 'here' | 'elsewhere';
export type ChangeListener = (change: Change, origin: ChangeOrigin) => void;

/**
 * Whether the changes made elsewhere reach this process now: `local` with no transport that can drop
 * (one node), `listening` while every transport is connected, `reconnecting` while one is not.
 */
export type ChangeFeedStatus = 'local' | 'listening' | 'reconnecting';

/** Carries changes to the other workers and nodes, and brings theirs (cluster messaging, PostgreSQL LISTEN/NOTIFY). */
export interface ChangeTransport {
  /**
   * Carries a change elsewhere. With `confirm`, the answer settles once those it reaches have acted on
   * it, or a deadline has passed (the transport then says so in the log); it never fails. A transport
   * that cannot confirm settles at once.
   */
  send(change: Change, confirm?: boolean): void | Promise<void>;
  /**
   * Starts delivering the changes made elsewhere. A transport whose connection can drop reports it
   * through `connected`: false as soon as changes may be missed (before anything else), true once
   * they reach this process again; it starts out disconnected when it can drop at all.
   */
  start(deliver: (change: Change) => void, connected?: (isConnected: boolean) => void): void;
  /**
   * Whether every change sent from elsewhere before a recent moment has been delivered here, asked at
   * each cache read: a transport that can only tell by looking at the clock (a worker whose event loop
   * stalled has not read what waits for it) answers here, synchronously. Absent: `connected` says it.
   */
  fresh?(): boolean;
  close(): Promise<void>;
}

export class ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  private readonly transports: ChangeTransport[] = [];
  /** The transports that can drop, and the ones of them that are disconnected now. */
  private readonly droppable = new Set<ChangeTransport>();
  private readonly disconnected = new Set<ChangeTransport>();
  /** The transports that tell their freshness themselves (`fresh`). */
  private readonly freshness: Array<() => boolean> = [];

  /** `onListenerError` hears about a subscriber that threw; the others are still told. */
  constructor(private readonly onListenerError: (error: unknown, change: Change) => void = () => {}) {}

  /** A change written here: told to every subscriber here at once, and sent elsewhere. */
  publish(change: Change): void {
    this.notify(change, 'here');
    for (const transport of this.transports) void transport.send(change);
  }

  /**
   * Like `publish`, and settles once every transport that can confirm has (the other workers of this
   * node have acted on it), or its deadline passed: what a revocation's answer waits for, so that the
   * next request, whichever worker it reaches, is refused. Never fails.
   */
  async publishConfirmed(change: Change): Promise<void> {
    this.notify(change, 'here');
    await Promise.all(this.transports.map((transport) => transport.send(change, true)));
  }

  /** Listens to every change, made here or elsewhere; returns how to stop. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends this feed's changes elsewhere through the transport, and delivers the changes it brings. */
  attach(transport: ChangeTransport): void {
    this.transports.push(transport);
    if (transport.fresh) this.freshness.push(transport.fresh.bind(transport));
    transport.start(
      (change) => this.notify(change, 'elsewhere'),
      (isConnected) => {
        this.droppable.add(transport);
        if (isConnected) this.disconnected.delete(transport);
        else this.disconnected.add(transport);
      },
    );
  }

  /**
   * Whether every change made elsewhere reaches this process now. While not, a cached copy of revocable
   * state (a session) may be stale without anyone knowing: caches are bypassed, so that a missed
   * revocation never becomes an allow.
   */
  get inSync(): boolean {
    if (this.disconnected.size > 0) return false;
    // Asked on every cached read of the hot path: usually an empty list, at most one clock read.
    for (const fresh of this.freshness) if (!fresh()) return false;
    return true;
  }

  /** For /readyz. */
  status(): ChangeFeedStatus {
    if (!this.inSync) return 'reconnecting';
    return this.droppable.size > 0 ? 'listening' : 'local';
  }

  async close(): Promise<void> {
    await Promise.all(this.transports.splice(0).map((transport) => transport.close()));
    this.droppable.clear();
    this.disconnected.clear();
    this.freshness.length = 0;
    this.listeners.clear();
  }

  private notify(change: Change, origin: ChangeOrigin): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change, origin);
      } catch (error) {
        this.onListenerError(error, change);
      }
    }
  }
}
