import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import type { ConfigInput } from '../../../src/config/schema.js';
import { createServices, type Services } from '../../../src/services.js';
import { freePort } from './freePort.js';

export interface RunningGatehouse {
  url: string;
  port: number;
  app: FastifyInstance;
  services: Services;
  close(): Promise<void>;
}

/** The real server, listening on loopback with its own data folder, configured like an operator would. */
export async function startGatehouse(overrides: Partial<ConfigInput> & { port?: number } = {}): Promise<RunningGatehouse> {
  const { port: wanted, ...input } = overrides;
  const port = wanted ?? (await freePort());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-test-'));
  const config = parseConfig(
    {
      publicUrl: `http://localhost:${port}`,
      listen: { host: '127.0.0.1', port },
      dataDir,
      // Suites sign in dozens of times a minute from one address; the rate-limit suite sets its own.
      signIn: { rateLimit: { max: 10_000 } },
      ...input,
    },
    { env: {} },
  );
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const services = await createServices(config, log);
  const app = await buildApp(services, { loggerInstance: log });
  await app.listen({ host: '127.0.0.1', port });
  services.providers.start();
  return {
    url: `http://localhost:${port}`,
    port,
    app,
    services,
    async close() {
      await app.close();
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
