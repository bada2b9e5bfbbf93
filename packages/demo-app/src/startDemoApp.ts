import type { AddressInfo } from 'node:net';

import { buildDemoApp, type DemoAppOptions } from './buildDemoApp.js';
import { echoSocket } from './echoSocket.js';

export interface StartDemoAppOptions extends DemoAppOptions {
  port: number;
  /** Default `localhost`: Fastify then listens on every loopback address it resolves to. */
  host?: string;
}

export interface DemoApp {
  url: string;
  close(): Promise<void>;
}

export async function startDemoApp(opts: StartDemoAppOptions): Promise<DemoApp> {
  const { port, host = 'localhost', ...appOptions } = opts;
  const app = buildDemoApp(appOptions);
  app.server.on('upgrade', echoSocket());
  await app.listen({ port, host });
  const boundPort = (app.server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`,
    close: () => app.close(),
  };
}
