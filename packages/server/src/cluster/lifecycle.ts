import { z } from 'zod';
import { notice } from './channel.js';

/**
 * A worker's life as its primary sees it (cli/start.ts): it says when it is ready to serve, and is told
 * when to stop. Its start (the configuration in force, reload.ts) and its exit are node:cluster's own.
 */

/** Worker → primary: listening, ready to serve (the primary counts them; only a ready worker is asked for readiness). */
export const workerReady = notice('worker-ready', z.strictObject({}));

/** Primary → worker: stop serving and exit (SIGINT or SIGTERM reached the primary). */
export const stopWorker = notice('stop', z.strictObject({}));
