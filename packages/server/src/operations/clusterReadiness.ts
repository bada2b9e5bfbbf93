import type { Cluster, Worker } from 'node:cluster';
import type { FullReadiness } from './health.js';

/**
 * The metrics listener's `GET /readyz` under `workers:`: the primary listens, but the database pool, the
 * change listener and the providers are the workers'. It asks one ready worker (the next in turn) over
 * the cluster's IPC channel for its full report, and gives up after READINESS_TIMEOUT (the report's IdP
 * checks take at most a few seconds), which the listener answers with a 503.
 */

/** How long the primary waits for a worker's report. */
export const READINESS_TIMEOUT = 5_000;

interface ReadinessQuestion {
  gatehouseReadiness: { id: number };
}
interface ReadinessAnswer {
  gatehouseReadinessAnswer: { id: number; report?: FullReadiness; error?: string };
}

function questionId(message: unknown): number | undefined {
  const id = (message as Partial<ReadinessQuestion> | null)?.gatehouseReadiness?.id;
  return Number.isSafeInteger(id) ? id : undefined;
}

function isAnswer(message: unknown): message is ReadinessAnswer {
  const answer = (message as Partial<ReadinessAnswer> | null)?.gatehouseReadinessAnswer;
  return typeof answer === 'object' && answer !== null && Number.isSafeInteger(answer.id);
}

/** A worker's side: answers its primary's questions with this worker's own report. */
export function answerReadinessQuestions(report: () => Promise<FullReadiness>, channel: Pick<NodeJS.Process, 'on' | 'send' | 'connected'> = process): void {
  channel.on('message', (message: unknown) => {
    const id = questionId(message);
    if (id === undefined) return;
    const reply = (answer: ReadinessAnswer['gatehouseReadinessAnswer']) => {
      if (channel.connected) channel.send?.({ gatehouseReadinessAnswer: answer } satisfies ReadinessAnswer);
    };
    report().then(
      (value) => reply({ id, report: value }),
      (error: unknown) => reply({ id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

/**
 * The primary's side: a function that asks a worker for its report. Only a worker that said it is
 * ready (`gatehouseReady`, main.ts) is asked: one still starting has no answer to give yet.
 */
export function workersReadiness(cluster: Pick<Cluster, 'on' | 'workers'>, timeout = READINESS_TIMEOUT): () => Promise<FullReadiness> {
  const ready = new WeakSet<Worker>();
  const pending = new Map<number, { resolve: (report: FullReadiness) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  let turn = 0;
  cluster.on('message', (worker: Worker, message: unknown) => {
    if ((message as { gatehouseReady?: unknown } | null)?.gatehouseReady === true) ready.add(worker);
    if (!isAnswer(message)) return;
    const { id, report, error } = message.gatehouseReadinessAnswer;
    const waiting = pending.get(id);
    if (!waiting) return;
    pending.delete(id);
    clearTimeout(waiting.timer);
    if (report) waiting.resolve(report);
    else waiting.reject(new Error(`worker ${worker.process.pid} could not check readiness: ${error ?? 'no report'}`));
  });
  return () =>
    new Promise<FullReadiness>((resolve, reject) => {
      const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && worker.isConnected() && ready.has(worker));
      if (workers.length === 0) return reject(new Error('no worker is ready yet'));
      const worker = workers[turn++ % workers.length]!;
      const id = ++nextId;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`worker ${worker.process.pid} did not report its readiness within ${timeout} ms`));
      }, timeout);
      pending.set(id, { resolve, reject, timer });
      worker.send({ gatehouseReadiness: { id } } satisfies ReadinessQuestion);
    });
}
