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

/** Carries changes to the other workers and nodes, and brings theirs (cluster messaging, PostgreSQL LISTEN/NOTIFY). */
export interface ChangeTransport {
  send(change: Change): void;
  /** Starts delivering the changes made elsewhere. */
  start(deliver: (change: Change) => void): void;
  close(): Promise<void>;
}

export class ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  private readonly transports: ChangeTransport[] = [];

  /** `onListenerError` hears about a subscriber that threw; the others are still told. */
  constructor(private readonly onListenerError: (error: unknown, change: Change) => void = () => {}) {}

  /** A change written here: told to every subscriber here at once, and sent elsewhere. */
  publish(change: Change): void {
    this.notify(change, 'here');
    for (const transport of this.transports) transport.send(change);
  }

  /** Listens to every change, made here or elsewhere; returns how to stop. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends this feed's changes elsewhere through the transport, and delivers the changes it brings. */
  attach(transport: ChangeTransport): void {
    this.transports.push(transport);
    transport.start((change) => this.notify(change, 'elsewhere'));
  }

  async close(): Promise<void> {
    await Promise.all(this.transports.splice(0).map((transport) => transport.close()));
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
