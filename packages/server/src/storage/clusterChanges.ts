import type { Cluster, Worker } from 'node:cluster';
import type { Change, ChangeTransport } from './changes.js';

/** The message a worker sends its node's primary, and the primary passes on to the other workers. */
interface ChangeMessage {
  gatehouseChange: Change;
}

function isChangeMessage(message: unknown): message is ChangeMessage {
  return typeof message === 'object' && message !== null && typeof (message as ChangeMessage).gatehouseChange?.type === 'string';
}

/**
 * A worker's side of the change feed between the workers of one node (`workers:`): its changes go to
 * the primary over the cluster's IPC channel, and the other workers' changes come back from it.
 */
export function workerChangeTransport(channel: Pick<NodeJS.Process, 'send' | 'on' | 'off'> = process): ChangeTransport {
  let listener: ((message: unknown) => void) | undefined;
  return {
    send(change) {
      channel.send?.({ gatehouseChange: change } satisfies ChangeMessage);
    },
    start(deliver) {
      listener = (message) => {
        if (isChangeMessage(message)) deliver(message.gatehouseChange);
      };
      channel.on('message', listener);
    },
    async close() {
      if (listener) channel.off('message', listener);
    },
  };
}

/** The primary's side: every change a worker sends is passed on to every other worker that is still there. */
export function relayChangesBetweenWorkers(cluster: Pick<Cluster, 'on' | 'workers'>): void {
  cluster.on('message', (from: Worker, message: unknown) => {
    if (!isChangeMessage(message)) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker && worker !== from && worker.isConnected()) worker.send(message);
    }
  });
}
