import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  port: number;
  /** Starts answering requests. Separate from listening because the issuer URL needs the port first. */
  serve(handler: RequestListener): void;
  close(): Promise<void>;
}

/** Errors meaning "this machine has no such address", e.g. no IPv6 loopback in a container. */
const ADDRESS_UNAVAILABLE = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT']);

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Browsers keep idle connections open; without this, close() would wait for them to time out.
    server.closeAllConnections();
  });
}

/**
 * Listens on `host`. For `localhost` that means both loopback addresses, 127.0.0.1 and ::1, on the same
 * port: browsers resolve `localhost` to either, and a port held on only one of them would let another
 * local process answer the other (never `::` or `0.0.0.0`; the dev IdP stays on loopback). ::1 is
 * skipped when the machine has no IPv6 loopback. With port 0 the system picks a port that is free on
 * both. A taken port rejects with the listen error (`code: 'EADDRINUSE'`).
 */
export async function listenLoopback(host: string, port: number): Promise<Listening> {
  const hosts = host === 'localhost' ? ['127.0.0.1', '::1'] : [host];
  // With port 0, ::1 may already be taken at the port picked for 127.0.0.1: pick again.
  for (let attempt = 1; ; attempt++) {
    const servers: Server[] = [];
    const close = () => Promise.all(servers.map(closeServer)).then(() => undefined);
    let boundPort = port;
    try {
      for (const address of hosts) {
        const server = createServer();
        try {
          boundPort = await listen(server, address, boundPort);
          servers.push(server);
        } catch (error) {
          if (address !== hosts[0] && ADDRESS_UNAVAILABLE.has((error as NodeJS.ErrnoException).code ?? '')) continue;
          throw error;
        }
      }
      const serve = (handler: RequestListener) => servers.forEach((server) => server.on('request', handler));
      return { port: boundPort, serve, close };
    } catch (error) {
      await close();
      const retry = port === 0 && attempt < 5 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!retry) throw error;
    }
  }
}
