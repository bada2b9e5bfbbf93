import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { httpGet } from './http.js';
import { freePort, type ProcessGroup, type ServerProcess } from './processes.js';

export interface RunningGatehouse {
  server: ServerProcess;
  port: number;
  /** http://localhost:<port> */
  portalOrigin: string;
  /** http://bench.localhost:<port> */
  appOrigin: string;
  /** bench.localhost:<port>, the Host header of the app. */
  appHost: string;
  /** The app's id: forward-auth checks name it (/.gatehouse/auth/<app id>). */
  appId: string;
  providerId: string;
}

/**
 * The built server, started as `npm start` would run it but production-like in what costs CPU (JSON
 * logs at warn), with the real development IdP as its child process and one app, "bench", in front of
 * the benchmark's upstream.
 */
export async function startGatehouse(
  processes: ProcessGroup,
  input: { root: string; workDir: string; upstreamPort: number; nodeArgs?: readonly string[] },
): Promise<RunningGatehouse> {
  const main = path.join(input.root, 'packages/server/dist/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const idpPort = await freePort();
  const providerId = 'dev';
  const portalOrigin = `http://localhost:${port}`;
  const appHost = `bench.localhost:${port}`;
  const appOrigin = `http://${appHost}`;
  const config = {
    mode: 'development',
    publicUrl: portalOrigin,
    listen: { host: '127.0.0.1', port },
    dataDir: path.join(input.workDir, 'data'),
    log: { level: 'warn', format: 'json' },
    trustedProxies: ['127.0.0.1/8'],
    development: { idps: [{ port: idpPort, providerId, name: 'Development IdP', users: 'default', trustGroups: true }], demoApp: false },
    apps: [{ id: 'bench', name: 'Bench', publicUrl: appOrigin, upstream: `http://127.0.0.1:${input.upstreamPort}`, policy: { allow: [{ groups: ['staff'] }] } }],
  };
  await mkdir(config.dataDir, { recursive: true });
  const file = path.join(input.workDir, 'gatehouse.yaml');
  // JSON is YAML.
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
  const server = processes.start('gatehouse', [...(input.nodeArgs ?? []), main, 'start', '--config', file], { cwd: input.root });
  await waitUntilReady(server, port, 60_000);
  return { server, port, portalOrigin, appOrigin, appHost, appId: config.apps[0]!.id, providerId };
}

/** Polls /readyz until the database is reachable and every provider's discovery is `ready`. */
async function waitUntilReady(server: ServerProcess, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!server.running) throw new Error(`Gatehouse exited during start:\n${server.tail()}`);
    try {
      const response = await httpGet({ port, path: '/readyz', timeoutMs: 2_000 });
      last = `${response.status} ${response.body}`;
      if (response.status === 200) {
        const ready = JSON.parse(response.body) as { status: string; checks: { providers: Array<{ id: string; status: string }> } };
        if (ready.status === 'ready' && ready.checks.providers.length > 0 && ready.checks.providers.every((p) => p.status === 'ready')) return;
      }
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Gatehouse not ready after ${timeoutMs} ms (last /readyz: ${last}):\n${server.tail()}`);
}
