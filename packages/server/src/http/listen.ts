import cluster from 'node:cluster';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** "No such address here", e.g. a container without IPv6 loopback. */
const ADDRESS_UNAVAILABLE = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT']);

/**
 * Listens like the operator asked. For `localhost` that is both loopback addresses, 127.0.0.1 and ::1,
 * whatever /etc/hosts says: browsers try either, and a port held on only one of them lets another local
 * process answer on the other. Returns a function that closes the extra listener.
 */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<() => Promise<void>> {
  if (host !== 'localhost') {
    await app.listen({ host, port });
    return async () => {};
  }
  await app.listen({ host: '127.0.0.1', port });
  const boundPort = (app.server.address() as { port: number }).port;
  const handler = app.server.listeners('request')[0] as RequestListener;
  // The same server options as the first one (app.ts): the handler checks the Host header itself.
  const secondary: Server = createServer({ requireHostHeader: false }, handler);
  for (const event of ['upgrade', 'connect', 'clientError'] as const) {
    for (const listener of app.server.listeners(event)) secondary.on(event, listener as (...args: unknown[]) => void);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      secondary.once('error', reject);
      // A worker of a cluster shares the address with its siblings through the primary; alone, it holds it.
      secondary.listen({ host: '::1', port: boundPort, exclusive: !cluster.isWorker }, () => resolve());
    });
  } catch (error) {
    if (ADDRESS_UNAVAILABLE.has((error as NodeJS.ErrnoException).code ?? '')) {
      app.log.info('no IPv6 loopback on this machine: listening on 127.0.0.1 only');
      return async () => {};
    }
    await app.close();
    throw error;
  }
  return () =>
    new Promise<void>((resolve) => {
      secondary.close(() => resolve());
      secondary.closeAllConnections();
    });
}
