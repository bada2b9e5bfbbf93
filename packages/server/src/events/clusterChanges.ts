import type { Worker } from 'node:cluster';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { AskFailed, notice, question, type PrimaryChannel, type WorkersChannel } from '../cluster/channel.js';
import type { Change, ChangeTransport } from './changes.js';

/**
 * The change feed between the workers of one node (`workers:`), over the node's channel (cluster/channel.ts): a
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

const sessionIds = z.array(z.string().min(1).max(256));
/** A change as it travels between the workers: each kind with exactly its own fields. */
const changeSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('sessions-ended'), sessionIds }),
  z.strictObject({ type: z.literal('sessions-changed'), sessionIds }),
  z.strictObject({ type: z.literal('apps-changed') }),
  z.strictObject({ type: z.literal('providers-changed') }),
  z.strictObject({ type: z.literal('signing-keys-changed') }),
  z.strictObject({ type: z.literal('everything') }),
]) satisfies z.ZodType<Change>;

/** Worker → primary → the other workers: a change, nobody waits. */
const changeNotice = notice('change', changeSchema);
/** Worker → primary: a change the sender waits for (a revocation); answered with the workers that were late (pids). */
const confirmQuestion = question('change-to-confirm', changeSchema, z.strictObject({ late: z.array(z.number().int()) }));
/** Primary → worker: a change to act on and acknowledge once acted on. */
const relayQuestion = question('change-relayed', changeSchema, z.strictObject({}));
/** Worker → primary: still heard? Everything the primary sent before its answer has been read (the pipe keeps order). */
const heartbeatQuestion = question('heartbeat', z.strictObject({}), z.strictObject({}));

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
export function workerChangeTransport(channel: Pick<PrimaryChannel, 'notify' | 'ask' | 'on' | 'answer'>, { log, now = () => performance.now() }: WorkerTransportOptions): ChangeTransport {
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;
  /** When the last ping the primary answered was sent: everything it sent before then has been read. */
  let heardUpTo = Number.NEGATIVE_INFINITY;
  /** The confirmations waited for: closing settles them. */
  const waiting = new Set<() => void>();
  let lastWarning = Number.NEGATIVE_INFINITY;

  const warn = (details: object, message: string) => {
    if (now() - lastWarning < WARNING_INTERVAL_MS) return;
    lastWarning = now();
    log.warn(details, message);
  };

  return {
    send(change, confirm) {
      if (closed) return;
      if (!confirm) {
        channel.notify(changeNotice, change);
        return;
      }
      return new Promise<void>((resolve) => {
        const done = () => {
          if (waiting.delete(done)) resolve();
        };
        waiting.add(done);
        channel.ask(confirmQuestion, change, { deadline: CONFIRM_DEADLINE_MS }).then(done, (error: unknown) => {
          if (error instanceof AskFailed && error.reason === 'deadline') {
            warn(
              { change: change.type, afterMs: CONFIRM_DEADLINE_MS },
              "this node's primary process did not confirm a revocation to the other workers in time: answered anyway (each worker reads sessions from the database until it hears from the primary again)",
            );
          }
          // No primary to confirm (the pipe closed: the worker is being stopped): answered at once.
          done();
        });
      });
    },
    start(deliver) {
      channel.on(changeNotice, (change) => {
        if (!closed) deliver(change);
      });
      // Acted on (every subscriber runs synchronously) when the answer leaves: the primary may tell the sender.
      channel.answer(relayQuestion, (change) => {
        if (!closed) deliver(change);
        return {};
      });
      const ping = () => {
        const sent = now();
        channel.ask(heartbeatQuestion, {}, { deadline: FRESH_WITHIN_MS }).then(
          () => (heardUpTo = Math.max(heardUpTo, sent)),
          // Unanswered: `fresh` turns false by itself as the clock runs.
          () => {},
        );
      };
      ping();
      heartbeat = setInterval(ping, HEARTBEAT_MS);
      heartbeat.unref();
    },
    fresh() {
      return now() - heardUpTo <= FRESH_WITHIN_MS;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      for (const done of [...waiting]) done();
    },
  };
}

/**
 * The primary's side: every change a worker sends is passed on to every other worker that is still
 * there; one to confirm is confirmed to its sender once each worker listening for changes has
 * acknowledged it (or exited), or after DELIVERY_DEADLINE_MS, naming the late ones in the log. Pings are
 * answered.
 */
export function relayChangesBetweenWorkers(channel: Pick<WorkersChannel, 'on' | 'answer' | 'ask' | 'notify' | 'notifyAll' | 'workers'>, log: Log): void {
  /** Workers whose change feed is attached (they have pinged): they acknowledge what they are sent. */
  const listening = new WeakSet<Worker>();

  channel.answer(heartbeatQuestion, (_, from) => {
    listening.add(from);
    return {};
  });
  channel.on(changeNotice, (change, from) => channel.notifyAll(changeNotice, change, from));
  channel.answer(confirmQuestion, async (change, from) => {
    const others = channel.workers().filter((worker) => worker !== from);
    // A worker still starting has nothing cached yet: it is sent the change, and not waited for.
    const acting = others.filter((worker) => listening.has(worker));
    for (const worker of others) if (!listening.has(worker)) channel.notify(worker, changeNotice, change);
    const acknowledged = await Promise.allSettled(acting.map((worker) => channel.ask(worker, relayQuestion, change, { deadline: DELIVERY_DEADLINE_MS })));
    // A worker that exited meanwhile has nothing left to serve: it is not late.
    const late = acting
      .filter((_, index) => {
        const outcome = acknowledged[index]!;
        return outcome.status === 'rejected' && !(outcome.reason instanceof AskFailed && outcome.reason.reason === 'gone');
      })
      .map((worker) => worker.process.pid ?? 0);
    if (late.length > 0) {
      log.warn(
        { change: change.type, late, afterMs: DELIVERY_DEADLINE_MS },
        'a revocation was answered before every worker had acted on it: the late workers read sessions from the database until they catch up',
      );
    }
    return { late };
  });
}
