import cluster from 'node:cluster';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** "No such address here", e.g. a container without IPv6 loopback. */
const ADDRESS_UNAVAILABLE = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT']);

export interface Listening {
  /** Where the server listens, as read from its sockets once bound: `http://127.0.0.1:4180`, `http://[::1]:4180`. */
  addresses: string[];
  /** Stops listening (both sockets) and waits for the connections to end; Fastify's close does not do it. */
  close(): Promise<void>;
}

/**
 * Listens like the operator asked. For `localhost` that is both loopback addresses, 127.0.0.1 and ::1,
 * whatever /etc/hosts says: browsers try either, and a port held on only one of them lets another local
 * process answer on the other.
 *
 * The sockets are bound here rather than by Fastify's `listen`, whose start-up line names only the
 * address it bound itself ("Server listening at http://127.0.0.1:4180" while ::1 was listening too):
 * the caller logs one line with every address in `addresses`, read from the sockets themselves. So
 * closing them is the caller's too (`close`), alongside the app's.
 */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<Listening> {
  await app.ready();
  const servers: Server[] = [app.server];
  try {
    await bind(app.server, host === 'localhost' ? '127.0.0.1' : host, port);
  } catch (error) {
    await app.close();
    throw error;
  }
  if (host === 'localhost') {
    const boundPort = (app.server.address() as AddressInfo).port;
    const handler = app.server.listeners('request')[0] as RequestListener;
    // The same server options as the first one (app.ts): the handler checks the Host header itself.
    const secondary: Server = createServer({ requireHostHeader: false }, handler);
    for (const event of ['upgrade', 'connect', 'clientError'] as const) {
      for (const listener of app.server.listeners(event)) secondary.on(event, listener as (...args: unknown[]) => void);
    }
    try {
      await bind(secondary, '::1', boundPort);
      servers.push(secondary);
    } catch (error) {
      if (ADDRESS_UNAVAILABLE.has((error as NodeJS.ErrnoException).code ?? '')) {
        app.log.info('no IPv6 loopback on this machine: listening on 127.0.0.1 only');
      } else {
        await closeServer(app.server);
        await app.close();
        throw error;
      }
    }
  }
  return {
    addresses: servers.map(addressOf),
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
}

function bind(server: Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once('error', failed);
    // A worker of a cluster shares the address with its siblings through the primary; alone, it holds it.
    server.listen({ host, port, exclusive: !cluster.isWorker }, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** `http://127.0.0.1:4180`, `http://[::1]:4180`, as the socket says it is bound. */
function addressOf(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** Stops taking connections, closes the idle ones (Node does on close), and waits for the rest to end. */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
