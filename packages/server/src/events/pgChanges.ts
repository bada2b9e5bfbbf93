import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Change, ChangeTransport } from './changes.js';
import type { Db } from '../storage/database.js';
import { sendNotification } from './notificationStore.js';

/** The channel every Gatehouse node on one database listens on. */
export const CHANGES_CHANNEL = 'gatehouse_changes';

/**
 * PostgreSQL refuses a notification payload of 8,000 bytes or more; a change is split into several
 * (sessions in batches) to stay well under it.
 */
const MAX_PAYLOAD_BYTES = 7_000;

/** Between a dropped connection's reconnection attempts: doubling, with jitter, up to the last. */
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 30_000;

/**
 * The listening connection is asked to answer every HEARTBEAT_MS. A connection that died without a word
 * (a network partition, a firewall forgetting it) would otherwise go on looking open while notifications
 * no longer arrive. A heartbeat unanswered after SUSPECT_AFTER_MS puts the feed out of sync (caches
 * flushed and bypassed) until it is answered, so a silent connection is trusted for at most
 * HEARTBEAT_MS + SUSPECT_AFTER_MS; unanswered after HEARTBEAT_TIMEOUT_MS, the connection is dropped and
 * made again.
 */
const HEARTBEAT_MS = 1_000;
const SUSPECT_AFTER_MS = 1_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;

type Log = {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
};

export interface PostgresChangesOptions {
  /**
   * The node this process is a worker of. Notifications from the same node are not delivered: its
   * workers hear each other at once over cluster messaging (events/clusterChanges.ts). Without it, a
   * node of its own.
   */
  node?: string;
  /** A new client on the database, not connected yet: the listening connection is its own, not the pool's. */
  client(): pg.Client;
  /** Sends one notification (through the pool: sending must not wait for the listener to reconnect). */
  notify(channel: string, payload: string): Promise<void>;
  log: Log;
}

/** What travels in a notification: the change, and which node sent it (so that node ignores its own). */
interface Envelope {
  from: string;
  change: Change;
}

/**
 * The change feed between nodes on one PostgreSQL database: every change is sent with NOTIFY, and a
 * dedicated connection LISTENs for the other nodes' (this node's workers hear each other over IPC).
 *
 * A notification sent while the listening connection is down is lost. So the moment it drops, the feed
 * is told it is out of sync (caches of revocable state are bypassed, events/changes.ts) and everything
 * cached is dropped; it reconnects with backoff, and once it LISTENs again, everything is read afresh.
 * A missed notification therefore costs a reload, never a stale allow.
 */
export function postgresChangeTransport(options: PostgresChangesOptions): ChangeTransport {
  const self = options.node ?? randomUUID();
  let client: pg.Client | undefined;
  let closed = false;
  let retryDelay = FIRST_RETRY_MS;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let deliver: (change: Change) => void = () => {};
  let setConnected: (isConnected: boolean) => void = () => {};
  /** Whether this transport has listened before (the log then says the connection is back). */
  let listenedBefore = false;

  const receive = (message: pg.Notification): void => {
    if (message.channel !== CHANGES_CHANNEL) return;
    const envelope = parseEnvelope(message.payload);
    if (envelope?.from === self) return;
    if (!envelope) {
      // From a newer or older version of Gatehouse, or damaged: whatever it was, nothing cached is trusted.
      options.log.warn({ payload: message.payload?.slice(0, 200) }, 'a change notification could not be read: reading everything again');
      deliver({ type: 'everything' });
      return;
    }
    deliver(envelope.change);
  };

  const dropped = (connection: pg.Client, error: unknown): void => {
    if (connection !== client) return;
    client = undefined;
    clearInterval(heartbeat);
    connection.removeListener('notification', receive);
    // The client is done with; its errors from here on are of no interest (and must not crash the process).
    connection.on('error', () => {});
    void connection.end().catch(() => undefined);
    if (closed) return;
    // Out of sync before anything else, so nothing is cached between now and the flush.
    setConnected(false);
    deliver({ type: 'everything' });
    options.log.warn(
      { err: error instanceof Error ? error.message : String(error), retryInMs: retryDelay },
      'the change notification connection to PostgreSQL dropped: caches flushed and bypassed until it is back',
    );
    scheduleConnect();
  };

  const scheduleConnect = (): void => {
    const delay = Math.round(retryDelay * (0.75 + Math.random() * 0.5));
    retryDelay = Math.min(retryDelay * 2, LAST_RETRY_MS);
    retryTimer = setTimeout(() => void connect(), delay);
    retryTimer.unref();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const connection = options.client();
    client = connection;
    connection.on('error', (error) => dropped(connection, error));
    connection.on('end', () => dropped(connection, new Error('connection ended')));
    connection.on('notification', receive);
    try {
      await connection.connect();
      await connection.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      if (closed) return;
      if (client === connection) dropped(connection, error);
      return;
    }
    if (closed || client !== connection) return;
    retryDelay = FIRST_RETRY_MS;
    let waiting = false;
    let suspect = false;
    heartbeat = setInterval(() => {
      if (waiting) return;
      waiting = true;
      const late = setTimeout(() => {
        if (client !== connection || suspect) return;
        suspect = true;
        setConnected(false);
        deliver({ type: 'everything' });
        options.log.warn({ afterMs: SUSPECT_AFTER_MS }, 'the change notification connection to PostgreSQL does not answer: caches flushed and bypassed until it does');
      }, SUSPECT_AFTER_MS);
      late.unref();
      connection.query({ text: 'select 1', query_timeout: HEARTBEAT_TIMEOUT_MS } as pg.QueryConfig).then(
        () => {
          clearTimeout(late);
          waiting = false;
          if (!suspect || client !== connection) return;
          // Answered after all: listening again, and whatever may have been missed is read again.
          suspect = false;
          setConnected(true);
          deliver({ type: 'everything' });
          options.log.info({}, 'the change notification connection to PostgreSQL answers again: reading everything again');
        },
        (error: unknown) => {
          clearTimeout(late);
          dropped(connection, error);
        },
      );
    }, HEARTBEAT_MS);
    heartbeat.unref();
    // Listening: from here on nothing is missed. What may have been missed before is read again, the
    // first time too (a read that began before LISTEN must not be cached after it: the flush refuses it).
    setConnected(true);
    if (listenedBefore) options.log.info({}, 'the change notification connection to PostgreSQL is back: reading everything again');
    listenedBefore = true;
    deliver({ type: 'everything' });
  };

  return {
    send(change) {
      for (const payload of envelopesOf(self, change)) void sendWithRetry(options, payload);
    },
    start(onChange, connected) {
      deliver = onChange;
      setConnected = connected ?? (() => {});
      // Until the first LISTEN, changes from elsewhere could be missed: out of sync from the start.
      setConnected(false);
      void connect();
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(heartbeat);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}

/** Sends a notification on one of the pool's connections (its statement is the store's: notificationStore.ts). */
export function notifyThrough(db: Db): PostgresChangesOptions['notify'] {
  return (channel, payload) => sendNotification(db, channel, payload);
}

/**
 * Tells the running nodes about a change made by a one-off command (`gatehouse rotate-signing-key`),
 * which has no feed of its own: they act on it as on any other node's.
 */
export async function announceChange(db: Db, change: Change): Promise<void> {
  const notify = notifyThrough(db);
  for (const payload of envelopesOf(randomUUID(), change)) await notify(CHANGES_CHANNEL, payload);
}

/**
 * Sends a notification, retrying briefly: a change written but never announced would leave the other
 * nodes' caches stale until their expiry. What still fails is logged as an error.
 */
async function sendWithRetry(options: PostgresChangesOptions, payload: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await options.notify(CHANGES_CHANNEL, payload);
      return;
    } catch (error) {
      if (attempt >= 3) {
        options.log.error({ err: error instanceof Error ? error.message : String(error) }, 'a change could not be announced to the other nodes');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** The notifications one change travels in: a long list of sessions is split into several. */
export function envelopesOf(from: string, change: Change): string[] {
  const whole = JSON.stringify({ from, change } satisfies Envelope);
  if (Buffer.byteLength(whole) <= MAX_PAYLOAD_BYTES || !('sessionIds' in change)) return [whole];
  const payloads: string[] = [];
  let batch: string[] = [];
  const flush = () => {
    if (batch.length > 0) payloads.push(JSON.stringify({ from, change: { type: change.type, sessionIds: batch } }));
    batch = [];
  };
  // Session ids are short and fixed in length; the envelope's own overhead is far below the margin.
  let size = 0;
  for (const id of change.sessionIds) {
    const bytes = Buffer.byteLength(id) + 3;
    if (size + bytes > MAX_PAYLOAD_BYTES - 200) {
      flush();
      size = 0;
    }
    batch.push(id);
    size += bytes;
  }
  flush();
  return payloads;
}

const SIMPLE_CHANGES = new Set(['apps-changed', 'providers-changed', 'signing-keys-changed', 'everything']);

/** A notification's envelope, or undefined when it is not one this version knows. */
export function parseEnvelope(payload: string | undefined): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload ?? '');
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { from, change } = value as { from?: unknown; change?: unknown };
  if (typeof from !== 'string' || typeof change !== 'object' || change === null) return undefined;
  const { type, sessionIds } = change as { type?: unknown; sessionIds?: unknown };
  if (typeof type !== 'string') return undefined;
  if (SIMPLE_CHANGES.has(type)) return { from, change: { type } as Change };
  if ((type === 'sessions-ended' || type === 'sessions-changed') && Array.isArray(sessionIds) && sessionIds.every((id) => typeof id === 'string')) {
    return { from, change: { type, sessionIds } };
  }
  return undefined;
}
