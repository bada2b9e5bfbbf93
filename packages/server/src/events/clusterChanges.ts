import type { Cluster, Worker } from 'node:cluster';
import { performance } from 'node:perf_hooks';
import type { Change, ChangeTransport } from './changes.js';

/**
 * The change feed between the workers of one node (`workers:`), over the cluster's IPC channel: a
 * worker sends its changes to the primary, which passes them on to the other workers.
 *
 * A revocation waits for them (ChangeFeed.publishConfirmed): the primary passes it on with an id, each
 * worker acknowledges once it has acted on it (its session cache dropped the sessions, their WebSockets
 * closed), and the primary tells the sender once every worker has, or DELIVERY_DEADLINE_MS has passed.
 * Only then is the revocation answered: the next request, whichever worker it reaches, is refused.
 *
 * A worker that did not acknowledge in time (its event loop stalled, say) must not go on serving the
 * revoked session from its cache when it wakes up. So every worker pings the primary every HEARTBEAT_MS,
 * and knows that everything the primary sent before its last answered ping has been read (the channel
 * delivers in order). While that ping was sent more than FRESH_WITHIN_MS ago, the worker's caches are
 * bypassed (ChangeFeed.inSync): every session is read from the store, where the revocation was written
 * before it was announced. FRESH_WITHIN_MS is no longer than the primary's deadline, so a worker that
 * has not read a revocation by the time it is answered is out of sync by then, whatever it serves
 * first on waking. The same holds when the primary itself stalls: the sender answers after
 * CONFIRM_DEADLINE_MS, by which time no worker's last answer from the primary is fresh.
 */

/** How often a worker asks the primary whether it is still heard. */
export const HEARTBEAT_MS = 200;
/** How long the primary waits for the workers to act on a revocation before telling the sender anyway. */
export const DELIVERY_DEADLINE_MS = 1_000;
/** How recent a worker's last answered ping must be for its caches to be trusted (≤ DELIVERY_DEADLINE_MS). */
export const FRESH_WITHIN_MS = DELIVERY_DEADLINE_MS;
/** How long a worker waits for the primary's confirmation at most (a stalled primary): past FRESH_WITHIN_MS. */
export const CONFIRM_DEADLINE_MS = FRESH_WITHIN_MS + 500;
/** At most one warning a minute from a worker whose primary does not confirm. */
const WARNING_INTERVAL_MS = 60_000;

/** A change; `confirm` (a worker's id for it) when the sender waits for the others, `relay` (the primary's) when it asks for an acknowledgement. */
interface ChangeMessage {
  gatehouseChange: Change;
  gatehouseConfirm?: number;
  gatehouseRelay?: number;
}
/** Worker → primary: the relayed change was acted on. */
interface RelayedMessage {
  gatehouseRelayed: number;
}
/** Primary → worker: the change it asked to confirm reached every worker, or these (pids) were late. */
interface DeliveredMessage {
  gatehouseChangeDelivered: { id: number; late: number[] };
}
/** Worker → primary, and back: when the ping was sent (the worker's own clock). */
interface PingMessage {
  gatehousePing: number;
}
interface PongMessage {
  gatehousePong: number;
}

function isChangeMessage(message: unknown): message is ChangeMessage {
  return typeof message === 'object' && message !== null && typeof (message as ChangeMessage).gatehouseChange?.type === 'string';
}
const numberIn = <K extends string>(message: unknown, key: K): number | undefined => {
  const value = typeof message === 'object' && message !== null ? (message as Record<K, unknown>)[key] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

type Log = { warn(details: object, message: string): void };

export interface WorkerTransportOptions {
  log: Log;
  /** The worker's clock for freshness (performance.now: monotonic). */
  now?: () => number;
}

/**
 * A worker's side: its changes go to the primary, the other workers' come back from it, a confirmed
 * change (a revocation) waits for the primary's word, and `fresh` says whether the primary has been
 * heard lately.
 */
export function workerChangeTransport(channel: Pick<NodeJS.Process, 'send' | 'on' | 'off' | 'connected'>, { log, now = () => performance.now() }: WorkerTransportOptions): ChangeTransport {
  let listener: ((message: unknown) => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  /** When the last ping the primary answered was sent: everything it sent before then has been read. */
  let heardUpTo = Number.NEGATIVE_INFINITY;
  let nextId = 0;
  const waiting = new Map<number, () => void>();
  let lastWarning = Number.NEGATIVE_INFINITY;

  const send = (message: object): boolean => {
    if (!channel.connected || !channel.send) return false;
    try {
      channel.send(message);
      return true;
    } catch {
      // The channel closed under us: the worker is being stopped (its primary went away).
      return false;
    }
  };
  const warn = (details: object, message: string) => {
    if (now() - lastWarning < WARNING_INTERVAL_MS) return;
    lastWarning = now();
    log.warn(details, message);
  };

  return {
    send(change, confirm) {
      if (!confirm) {
        send({ gatehouseChange: change } satisfies ChangeMessage);
        return;
      }
      const id = (nextId = (nextId + 1) % Number.MAX_SAFE_INTEGER);
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          warn(
            { change: change.type, afterMs: CONFIRM_DEADLINE_MS },
            "this node's primary process did not confirm a revocation to the other workers in time: answered anyway (each worker reads sessions from the database until it hears from the primary again)",
          );
          resolve();
        }, CONFIRM_DEADLINE_MS);
        timer.unref();
        waiting.set(id, () => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        });
        if (!send({ gatehouseChange: change, gatehouseConfirm: id } satisfies ChangeMessage)) waiting.get(id)?.();
      });
    },
    start(deliver) {
      listener = (message) => {
        if (isChangeMessage(message)) {
          deliver(message.gatehouseChange);
          // Acted on (every subscriber runs synchronously): the primary may tell the sender.
          const relay = numberIn(message, 'gatehouseRelay');
          if (relay !== undefined) send({ gatehouseRelayed: relay } satisfies RelayedMessage);
          return;
        }
        const pong = numberIn(message, 'gatehousePong');
        if (pong !== undefined) {
          heardUpTo = Math.max(heardUpTo, pong);
          return;
        }
        const delivered = (message as Partial<DeliveredMessage> | null)?.gatehouseChangeDelivered;
        if (delivered && typeof delivered.id === 'number') waiting.get(delivered.id)?.();
      };
      channel.on('message', listener);
      const ping = () => void send({ gatehousePing: now() } satisfies PingMessage);
      ping();
      heartbeat = setInterval(ping, HEARTBEAT_MS);
      heartbeat.unref();
    },
    fresh() {
      return now() - heardUpTo <= FRESH_WITHIN_MS;
    },
    async close() {
      clearInterval(heartbeat);
      if (listener) channel.off('message', listener);
      for (const done of [...waiting.values()]) done();
    },
  };
}

/**
 * The primary's side: every change a worker sends is passed on to every other worker that is still
 * there; one to confirm is confirmed to its sender once each worker listening for changes has
 * acknowledged it (or exited), or after DELIVERY_DEADLINE_MS, naming the late ones in the log. Pings are
 * answered.
 */
export function relayChangesBetweenWorkers(cluster: Pick<Cluster, 'on' | 'workers'>, log: Log): void {
  /** Workers whose change feed is attached (they have pinged): they acknowledge what they are sent. */
  const listening = new WeakSet<Worker>();
  const pending = new Map<number, { waiting: Set<Worker>; done: () => void }>();
  let nextRelay = 0;

  cluster.on('exit', (worker: Worker) => {
    for (const relay of [...pending.values()]) {
      relay.waiting.delete(worker);
      if (relay.waiting.size === 0) relay.done();
    }
  });

  cluster.on('message', (from: Worker, message: unknown) => {
    const ping = numberIn(message, 'gatehousePing');
    if (ping !== undefined) {
      listening.add(from);
      if (from.isConnected()) from.send({ gatehousePong: ping } satisfies PongMessage);
      return;
    }
    const relayed = numberIn(message, 'gatehouseRelayed');
    if (relayed !== undefined) {
      const relay = pending.get(relayed);
      relay?.waiting.delete(from);
      if (relay?.waiting.size === 0) relay.done();
      return;
    }
    if (!isChangeMessage(message)) return;
    const others = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && worker !== from && worker.isConnected());
    const confirmed = numberIn(message, 'gatehouseConfirm');
    if (confirmed === undefined) {
      for (const worker of others) worker.send({ gatehouseChange: message.gatehouseChange } satisfies ChangeMessage);
      return;
    }
    const change = message.gatehouseChange;
    const senderId = confirmed;
    const relay = (nextRelay = (nextRelay + 1) % Number.MAX_SAFE_INTEGER);
    // A worker still starting has nothing cached yet: it is sent the change, and not waited for.
    const waiting = new Set(others.filter((worker) => listening.has(worker)));
    const timer = setTimeout(() => done(), DELIVERY_DEADLINE_MS);
    timer.unref();
    function done(): void {
      if (!pending.delete(relay)) return;
      clearTimeout(timer);
      const late = [...waiting].map((worker) => worker.process.pid ?? 0);
      if (late.length > 0) {
        log.warn(
          { change: change.type, late, afterMs: DELIVERY_DEADLINE_MS },
          'a revocation was answered before every worker had acted on it: the late workers read sessions from the database until they catch up',
        );
      }
      if (from.isConnected()) from.send({ gatehouseChangeDelivered: { id: senderId, late } } satisfies DeliveredMessage);
    }
    pending.set(relay, { waiting, done });
    for (const worker of others) worker.send({ gatehouseChange: change, gatehouseRelay: relay } satisfies ChangeMessage);
    if (waiting.size === 0) done();
  });
}
