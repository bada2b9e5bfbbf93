import type { Cluster, Worker } from 'node:cluster';
import { z } from 'zod';

/**
 * The one channel between a node's primary and its workers (`workers:`), over node:cluster's IPC pipe.
 * Every message the two sides exchange is a topic defined once, with a zod schema for what it carries
 * (and, for a question, for its answer), in the area that owns the conversation: the configuration
 * handover and reload (reload.ts), the node's rate-limit counts (limits/clusterLimits.ts), the change
 * feed between workers (events/clusterChanges.ts), the readiness report (operations/clusterReadiness.ts)
 * and the workers' lifecycle (cluster/lifecycle.ts).
 *
 * - `notify` sends a notice, and nothing comes back.
 * - `ask` sends a question with one id scheme (a counter per side) and one deadline: the promise settles
 *   with the answer, or rejects when the deadline passes, when the peer exits, or when the peer says it
 *   could not answer. An answer after its deadline, to a question never asked, or from another worker
 *   than the one asked, is dropped.
 *
 * Both sides judge what they receive (a worker may be compromised; the primary is held to the same
 * rules): a message that claims to be ours but does not match its envelope, or whose payload or answer
 * does not match its topic's schema, is dropped and logged, never acted on. Messages without our
 * envelope belong to someone else on the same pipe (prom-client's metrics aggregation) and are left
 * alone. A topic nobody here listens to is ignored (a worker still starting has not attached its
 * change feed yet); a question nobody here answers is refused at once, so the asker need not wait.
 */

/** A notice: one way, nothing comes back. */
export interface Notice<P> {
  readonly kind: 'notice';
  readonly name: string;
  readonly payload: z.ZodType<P>;
}

/** A question: one answer, of its own schema, within the asker's deadline. */
export interface Question<P, A> {
  readonly kind: 'question';
  readonly name: string;
  readonly payload: z.ZodType<P>;
  readonly answer: z.ZodType<A>;
}

/** Defines a notice once, for both sides. */
export function notice<P>(name: string, payload: z.ZodType<P>): Notice<P> {
  return { kind: 'notice', name, payload };
}

/** Defines a question once, for both sides. */
export function question<P, A>(name: string, payload: z.ZodType<P>, answer: z.ZodType<A>): Question<P, A> {
  return { kind: 'question', name, payload, answer };
}

/** Why an ask did not get its answer. */
export class AskFailed extends Error {
  constructor(
    message: string,
    /** `deadline`: no answer in time; `gone`: the peer exited or the pipe closed; `refused`: the peer could not answer. */
    readonly reason: 'deadline' | 'gone' | 'refused',
  ) {
    super(message);
    this.name = 'AskFailed';
  }
}

export interface AskOptions {
  /** Milliseconds: past this, the ask rejects and a late answer is dropped. */
  deadline: number;
}

type Log = { warn(details: object, message: string): void };

const id = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const topicName = z.string().min(1).max(100);
/** Our envelope; everything we send and receive is one of these under the `gatehouse` key. */
const envelopeSchema = z.object({
  gatehouse: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('notice'), topic: topicName, payload: z.unknown() }),
    z.object({ kind: z.literal('question'), id, topic: topicName, payload: z.unknown() }),
    z.object({ kind: z.literal('answer'), id, payload: z.unknown() }),
    z.object({ kind: z.literal('refusal'), id, reason: z.string().max(2_000) }),
  ]),
});
type Envelope = z.output<typeof envelopeSchema>['gatehouse'];

const ours = (message: unknown): boolean => typeof message === 'object' && message !== null && 'gatehouse' in message;

/** At most one warning a minute for dropped messages: a compromised peer must not flood the log. */
const WARNING_INTERVAL_MS = 60_000;

/** How one side reaches its peers: the worker's process (one peer, its primary) or the primary's cluster. */
interface Pipe<Peer> {
  send(to: Peer, message: { gatehouse: Envelope }, sent: (error: Error | null) => void): void;
  describe(peer: Peer): object;
}

interface Pending<Peer> {
  to: Peer;
  topic: Question<unknown, unknown>;
  resolve(answer: unknown): void;
  reject(error: AskFailed): void;
  timer: NodeJS.Timeout;
}

/** What both sides share: topics, handlers, ids, deadlines and the judging of what arrives. */
class Endpoint<Peer> {
  private readonly notices = new Map<string, { topic: Notice<unknown>; handlers: Array<(payload: unknown, from: Peer) => void> }>();
  private readonly answerers = new Map<string, { topic: Question<unknown, unknown>; handler: (payload: unknown, from: Peer) => unknown }>();
  private readonly pending = new Map<number, Pending<Peer>>();
  private nextId = 0;
  private lastWarning = Number.NEGATIVE_INFINITY;
  private dropped = 0;

  constructor(
    private readonly pipe: Pipe<Peer>,
    private readonly log: Log,
  ) {}

  on<P>(topic: Notice<P>, handler: (payload: P, from: Peer) => void): void {
    const entry = this.notices.get(topic.name) ?? { topic: topic as Notice<unknown>, handlers: [] };
    if (entry.topic !== topic) throw new Error(`two notices are named ${topic.name}`);
    entry.handlers.push(handler as (payload: unknown, from: Peer) => void);
    this.notices.set(topic.name, entry);
  }

  answer<P, A>(topic: Question<P, A>, handler: (payload: P, from: Peer) => A | Promise<A>): void {
    if (this.answerers.has(topic.name)) throw new Error(`the question ${topic.name} is answered here already`);
    this.answerers.set(topic.name, { topic: topic as Question<unknown, unknown>, handler: handler as (payload: unknown, from: Peer) => unknown });
  }

  notify<P>(to: Peer, topic: Notice<P>, payload: P): void {
    this.pipe.send(to, { gatehouse: { kind: 'notice', topic: topic.name, payload } }, () => {});
  }

  ask<P, A>(to: Peer, topic: Question<P, A>, payload: P, { deadline }: AskOptions): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      const askId = (this.nextId = (this.nextId + 1) % Number.MAX_SAFE_INTEGER);
      const timer = setTimeout(() => this.settle(askId, new AskFailed(`no answer to ${topic.name} within ${deadline} ms`, 'deadline')), deadline);
      // The pipe keeps the process up while it is open; a question alone does not.
      timer.unref();
      this.pending.set(askId, { to, topic: topic as Question<unknown, unknown>, resolve: resolve as (answer: unknown) => void, reject, timer });
      this.pipe.send(to, { gatehouse: { kind: 'question', id: askId, topic: topic.name, payload } }, (error) => {
        if (error) this.settle(askId, new AskFailed(`${topic.name} could not be sent: ${error.message}`, 'gone'));
      });
    });
  }

  /** The peer exited or the pipe closed: everything asked of it rejects now. */
  gone(peer: Peer | undefined, why: string): void {
    for (const [askId, waiting] of this.pending) {
      if (peer === undefined || waiting.to === peer) this.settle(askId, new AskFailed(`no answer to ${waiting.topic.name}: ${why}`, 'gone'));
    }
  }

  /** A message from `from`: acted on when it is ours and well formed, dropped (and logged) when it claims to be ours and is not. */
  receive(message: unknown, from: Peer): void {
    if (!ours(message)) return;
    const parsed = envelopeSchema.safeParse(message);
    if (!parsed.success) return this.drop(from, 'not a well-formed message');
    const envelope = parsed.data.gatehouse;
    switch (envelope.kind) {
      case 'notice': {
        const entry = this.notices.get(envelope.topic);
        if (!entry) return;
        const payload = entry.topic.payload.safeParse(envelope.payload);
        if (!payload.success) return this.drop(from, `a malformed ${envelope.topic}`);
        for (const handler of entry.handlers) handler(payload.data, from);
        return;
      }
      case 'question': {
        const entry = this.answerers.get(envelope.topic);
        if (!entry) return this.reply(from, { kind: 'refusal', id: envelope.id, reason: `nobody answers ${envelope.topic} here` });
        const payload = entry.topic.payload.safeParse(envelope.payload);
        if (!payload.success) {
          this.drop(from, `a malformed ${envelope.topic}`);
          return this.reply(from, { kind: 'refusal', id: envelope.id, reason: `a malformed ${envelope.topic}` });
        }
        // The handler runs now, in the order the messages came (the change feed's freshness leans on it).
        let answer: unknown;
        try {
          answer = entry.handler(payload.data, from);
        } catch (error) {
          return this.reply(from, { kind: 'refusal', id: envelope.id, reason: messageOf(error) });
        }
        if (!(answer instanceof Promise)) return this.reply(from, { kind: 'answer', id: envelope.id, payload: answer });
        answer.then(
          (value: unknown) => this.reply(from, { kind: 'answer', id: envelope.id, payload: value }),
          (error: unknown) => this.reply(from, { kind: 'refusal', id: envelope.id, reason: messageOf(error) }),
        );
        return;
      }
      case 'answer':
      case 'refusal': {
        const waiting = this.pending.get(envelope.id);
        // Late (the deadline passed), never asked, or not from the peer asked: another worker must not
        // answer a question it was not asked.
        if (!waiting || waiting.to !== from) return;
        if (envelope.kind === 'refusal') return this.settle(envelope.id, new AskFailed(`${waiting.topic.name} refused: ${envelope.reason}`, 'refused'));
        const answer = waiting.topic.answer.safeParse(envelope.payload);
        if (!answer.success) {
          this.drop(from, `a malformed answer to ${waiting.topic.name}`);
          return this.settle(envelope.id, new AskFailed(`a malformed answer to ${waiting.topic.name}`, 'refused'));
        }
        return this.settle(envelope.id, undefined, answer.data);
      }
    }
  }

  private settle(askId: number, error: AskFailed | undefined, answer?: unknown): void {
    const waiting = this.pending.get(askId);
    if (!waiting) return;
    this.pending.delete(askId);
    clearTimeout(waiting.timer);
    if (error) waiting.reject(error);
    else waiting.resolve(answer);
  }

  private reply(to: Peer, envelope: Envelope): void {
    this.pipe.send(to, { gatehouse: envelope }, () => {});
  }

  private drop(from: Peer, what: string): void {
    this.dropped++;
    const now = Date.now();
    if (now - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = now;
    this.log.warn({ ...this.pipe.describe(from), dropped: this.dropped }, `dropped ${what} on the channel between this node's processes`);
    this.dropped = 0;
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 1_000);

/** The process's side of the pipe: what a worker's `process` offers. */
export type WorkerProcess = Pick<NodeJS.Process, 'send' | 'on' | 'off' | 'connected'>;

/** A worker's end: its one peer is its primary. */
export interface PrimaryChannel {
  notify<P>(topic: Notice<P>, payload: P): void;
  ask<P, A>(topic: Question<P, A>, payload: P, options: AskOptions): Promise<A>;
  on<P>(topic: Notice<P>, handler: (payload: P) => void): void;
  answer<P, A>(topic: Question<P, A>, handler: (payload: P) => A | Promise<A>): void;
  /** Stops listening; every pending ask rejects. */
  close(): void;
}

const PRIMARY = 'primary';

/** The worker's end of the channel, over its process's IPC pipe. */
export function channelToPrimary(log: Log, channel: WorkerProcess = process): PrimaryChannel {
  const endpoint = new Endpoint<typeof PRIMARY>(
    {
      send(_to, message, sent) {
        if (!channel.connected || !channel.send) return sent(new Error('no channel to the primary process'));
        try {
          channel.send(message, undefined, undefined, sent);
        } catch (error) {
          // The pipe closed under us: the worker is being stopped (its primary went away).
          sent(error instanceof Error ? error : new Error(String(error)));
        }
      },
      describe: () => ({ from: 'primary' }),
    },
    log,
  );
  const listener = (message: unknown) => endpoint.receive(message, PRIMARY);
  const disconnected = () => endpoint.gone(PRIMARY, 'the primary process went away');
  channel.on('message', listener);
  channel.on('disconnect', disconnected);
  return {
    notify: (topic, payload) => endpoint.notify(PRIMARY, topic, payload),
    ask: (topic, payload, options) => endpoint.ask(PRIMARY, topic, payload, options),
    on: (topic, handler) => endpoint.on(topic, (payload) => handler(payload)),
    answer: (topic, handler) => endpoint.answer(topic, (payload) => handler(payload)),
    close() {
      channel.off('message', listener);
      channel.off('disconnect', disconnected);
      endpoint.gone(undefined, 'the channel closed');
    },
  };
}

/** The primary's end: its peers are its workers. */
export interface WorkersChannel {
  notify<P>(to: Worker, topic: Notice<P>, payload: P): void;
  /** To every connected worker, but `except`. */
  notifyAll<P>(topic: Notice<P>, payload: P, except?: Worker): void;
  ask<P, A>(to: Worker, topic: Question<P, A>, payload: P, options: AskOptions): Promise<A>;
  on<P>(topic: Notice<P>, handler: (payload: P, from: Worker) => void): void;
  answer<P, A>(topic: Question<P, A>, handler: (payload: P, from: Worker) => A | Promise<A>): void;
  /** The workers the channel reaches now. */
  workers(): Worker[];
}

/** The primary's end of the channel, over each worker's IPC pipe. */
export function channelToWorkers(cluster: Pick<Cluster, 'on' | 'workers'>, log: Log): WorkersChannel {
  const workers = () => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && worker.isConnected());
  const endpoint = new Endpoint<Worker>(
    {
      send(to, message, sent) {
        if (!to.isConnected()) return sent(new Error(`worker ${to.process.pid} is not connected`));
        try {
          to.send(message, undefined, sent);
        } catch (error) {
          sent(error instanceof Error ? error : new Error(String(error)));
        }
      },
      describe: (worker) => ({ worker: worker.process.pid }),
    },
    log,
  );
  cluster.on('message', (worker: Worker, message: unknown) => endpoint.receive(message, worker));
  cluster.on('disconnect', (worker: Worker) => endpoint.gone(worker, `worker ${worker.process.pid} went away`));
  cluster.on('exit', (worker: Worker) => endpoint.gone(worker, `worker ${worker.process.pid} exited`));
  return {
    notify: (to, topic, payload) => endpoint.notify(to, topic, payload),
    notifyAll(topic, payload, except) {
      for (const worker of workers()) if (worker !== except) endpoint.notify(worker, topic, payload);
    },
    ask: (to, topic, payload, options) => endpoint.ask(to, topic, payload, options),
    on: (topic, handler) => endpoint.on(topic, handler),
    answer: (topic, handler) => endpoint.answer(topic, handler),
    workers,
  };
}
