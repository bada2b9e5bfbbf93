import type { Worker } from 'node:cluster';
import { readinessChecksSchema } from '@gatehouse/contract';
import { z } from 'zod';
import { question, type PrimaryChannel, type WorkersChannel } from '../cluster/channel.js';
import { workerReady } from '../cluster/lifecycle.js';
import type { FullReadiness } from './health.js';

/**
 * The metrics listener's `GET /readyz` under `workers:`: the primary listens, but the database pool, the
 * change listener and the providers are the workers'. It asks one ready worker (the next in turn) over
 * the node's channel (cluster/channel.ts) for its full report, and gives up after READINESS_TIMEOUT (the
 * report's IdP checks take at most a few seconds), which the listener answers with a 503.
 */

/** How long the primary waits for a worker's report. */
export const READINESS_TIMEOUT = 5_000;

/** Primary → worker: your full readiness report. Its answer is served to the operator as it is: judged whole. */
const readinessQuestion = question(
  'readiness',
  z.strictObject({}),
  z.object({ status: z.enum(['ready', 'unavailable']), checks: readinessChecksSchema }),
);

/** A worker's side: answers its primary's questions with this worker's own report. */
export function answerReadinessQuestions(report: () => Promise<FullReadiness>, channel: Pick<PrimaryChannel, 'answer'>): void {
  channel.answer(readinessQuestion, () => report());
}

/**
 * The primary's side: a function that asks a worker for its report. Only a worker that said it is
 * ready (cluster/lifecycle.ts) is asked: one still starting has no answer to give yet.
 */
export function workersReadiness(channel: Pick<WorkersChannel, 'on' | 'ask' | 'workers'>, timeout = READINESS_TIMEOUT): () => Promise<FullReadiness> {
  const ready = new WeakSet<Worker>();
  let turn = 0;
  channel.on(workerReady, (_, worker) => ready.add(worker));
  return async () => {
    const workers = channel.workers().filter((worker) => ready.has(worker));
    if (workers.length === 0) throw new Error('no worker is ready yet');
    const worker = workers[turn++ % workers.length]!;
    try {
      return await channel.ask(worker, readinessQuestion, {}, { deadline: timeout });
    } catch (error) {
      throw new Error(`worker ${worker.process.pid} could not report its readiness: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
}
