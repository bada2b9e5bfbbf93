import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { httpGet } from './http.js';
import { childPids, commandLine, freePort, type ProcessGroup, type ServerProcess } from './processes.js';

export interface RunningGatehouse {
  server: ServerProcess;
  port: number;
  /** http://localhost:<port> (or the site's, for a node of several) */
  portalOrigin: string;
  /** http://bench.localhost:<port> (or the site's, for a node of several) */
  appOrigin: string;
  /** bench.localhost:<port>, the Host header of the app. */
  appHost: string;
  /** The app's id: forward-auth checks name it (/.gatehouse/auth/<app id>). */
  appId: string;
  providerId: string;
  /** Its data folder (the SQLite database, the development IdP's data). */
  dataDir: string;
  /** Its configuration file. */
  file: string;
  /** Its scrape URL, with metrics on. */
  metricsUrl?: string | undefined;
  /**
   * The processes that answer requests: the one process, or with several workers the primary and its
   * workers (not the development IdP, which the primary runs too). Their CPU time is the server's.
   */
  answeringPids(): number[];
}

/** Keys shared by the nodes of one site (several nodes must have the same ones: docs/configuration.md). */
export interface SharedSecrets {
  cookieKey: string;
  encryptionKeys: Array<{ id: string; key: string }>;
}

export interface GatehouseOptions {
  root: string;
  workDir: string;
  upstreamPort: number;
  nodeArgs?: readonly string[];
  /** A name for its folder and its process (default "gatehouse", whose folder is the work folder's "data", as before). */
  name?: string;
  /** PostgreSQL; SQLite in its own data folder without it. */
  databaseUrl?: string;
  /** Worker processes (`workers:`); 1 by default. */
  workers?: number;
  secrets?: SharedSecrets;
  /**
   * The site this node is one of: its public URL and the app's (a node of several answers for the same
   * names as the others, on a port of its own). Without it, the node's own port names both.
   */
  site?: { portalOrigin: string; appOrigin: string };
  /** `session:` settings, when not the defaults. */
  session?: Record<string, unknown>;
  /** Prometheus metrics on a listener of their own (`metrics:`); off by default, as in production. */
  metrics?: boolean;
  /** The access log (`accessLog:`), to a file in the node's folder; off by default in development mode. */
  accessLog?: boolean;
  /** `log.level`, when not `warn` (requests are logged only at debug: info adds a few lines at start). */
  logLevel?: 'info' | 'warn';
  /** An app that is an OpenID Connect client of Gatehouse's OpenID Provider (client id = app id), beside "bench". */
  oidcClient?: { id: string; secret: string; redirectUri: string };
  /**
   * Apps that nginx or Caddy serves and only asks Gatehouse about (forward-auth: no upstream here), beside
   * "bench", with its policy: each at the public URL of its proxy's site.
   */
  forwardAuthApps?: ReadonlyArray<{ id: string; publicUrl: string }>;
  /** `signIn.rateLimit.max` (per client address and minute), when not the default 30. */
  signInRateLimit?: number;
}

/** A node's configuration, written to its folder, and the ports it will listen on. */
export interface PreparedGatehouse {
  name: string;
  /** Its configuration file (JSON, which is YAML). */
  file: string;
  port: number;
  portalOrigin: string;
  appOrigin: string;
  appHost: string;
  appId: string;
  providerId: string;
  dataDir: string;
  workers: number;
  nodeArgs: readonly string[];
  root: string;
  metricsUrl: string | undefined;
}

/**
 * The built server, started as `npm start` would run it but production-like in what costs CPU (JSON
 * logs at warn), with the real development IdP as its child process and one app, "bench", in front of
 * the benchmark's upstream.
 */
export async function startGatehouse(processes: ProcessGroup, input: GatehouseOptions): Promise<RunningGatehouse> {
  return launchGatehouse(processes, await prepareGatehouse(input));
}

/** Writes a node's configuration (and makes its data folder) without starting it. */
export async function prepareGatehouse(input: GatehouseOptions): Promise<PreparedGatehouse> {
  const main = path.join(input.root, 'packages/server/dist/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const name = input.name ?? 'gatehouse';
  const folder = name === 'gatehouse' ? input.workDir : path.join(input.workDir, name);
  const port = await freePort();
  const idpPort = await freePort();
  const providerId = 'dev';
  const portalOrigin = input.site?.portalOrigin ?? `http://localhost:${port}`;
  const appOrigin = input.site?.appOrigin ?? `http://bench.localhost:${port}`;
  const metricsPort = input.metrics ? await freePort() : undefined;
  const config = {
    mode: 'development',
    publicUrl: portalOrigin,
    listen: { host: '127.0.0.1', port },
    dataDir: path.join(folder, 'data'),
    log: { level: input.logLevel ?? 'warn', format: 'json' },
    trustedProxies: ['127.0.0.1/8'],
    ...(input.databaseUrl ? { database: { url: input.databaseUrl } } : {}),
    ...(input.workers && input.workers > 1 ? { workers: input.workers } : {}),
    ...(input.secrets ? { secrets: input.secrets } : {}),
    ...(input.session ? { session: input.session } : {}),
    ...(metricsPort ? { metrics: { listen: { host: '127.0.0.1', port: metricsPort } } } : {}),
    ...(input.accessLog ? { accessLog: { enabled: true, destination: path.join(folder, 'access.log') } } : {}),
    ...(input.signInRateLimit ? { signIn: { rateLimit: { max: input.signInRateLimit } } } : {}),
    development: { idps: [{ port: idpPort, providerId, name: 'Development IdP', users: 'default', trustGroups: true }], demoApp: false },
    // Compression on, as an operator turns it on (off by default), for the compression pair of scenarios.
    apps: [
      { id: 'bench', name: 'Bench', publicUrl: appOrigin, upstream: `http://127.0.0.1:${input.upstreamPort}`, compress: true, policy: { allow: [{ groups: ['staff'] }] } },
      ...(input.forwardAuthApps ?? []).map(({ id, publicUrl }) => ({ id, name: id, publicUrl, policy: { allow: [{ groups: ['staff'] }] } })),
      ...(input.oidcClient
        ? [
            {
              id: input.oidcClient.id,
              name: 'Bench OIDC',
              publicUrl: `http://${input.oidcClient.id}.localhost:${port}`,
              guard: false,
              policy: { allow: [{ groups: ['staff'] }] },
              oidc: { secrets: [input.oidcClient.secret], redirectUris: [input.oidcClient.redirectUri], scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'] },
            },
          ]
        : []),
    ],
  };
  // Private, as Gatehouse asks of its data folder (it warns otherwise).
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(folder, 'gatehouse.yaml');
  // JSON is YAML.
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
  return {
    name,
    file,
    port,
    portalOrigin,
    appOrigin,
    appHost: new URL(appOrigin).host,
    appId: config.apps[0]!.id,
    providerId,
    dataDir: config.dataDir,
    workers: input.workers ?? 1,
    nodeArgs: input.nodeArgs ?? [],
    root: input.root,
    metricsUrl: metricsPort ? `http://127.0.0.1:${metricsPort}/metrics` : undefined,
  };
}

/** Starts a prepared node and waits until it is ready (every worker of it, with several). */
export async function launchGatehouse(processes: ProcessGroup, prepared: PreparedGatehouse): Promise<RunningGatehouse> {
  const { name, port, workers } = prepared;
  const main = path.join(prepared.root, 'packages/server/dist/main.js');
  const server = processes.start(name, [...prepared.nodeArgs, main, 'start', '--config', prepared.file], { cwd: prepared.root });
  await waitUntilReady(server, port, prepared.portalOrigin, 60_000);
  const answeringPids = () => (workers > 1 ? [server.pid, ...workerPids(server.pid)] : [server.pid]);
  // /readyz answers once one worker listens: wait for all of them (each then has its first start behind it).
  for (let waited = 0; workers > 1 && answeringPids().length !== workers + 1; waited += 100) {
    if (waited > 20_000) throw new Error(`${name}: expected ${workers} worker processes, found ${answeringPids().length - 1}:\n${server.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (workers > 1) await new Promise((resolve) => setTimeout(resolve, 2_000));
  const { portalOrigin, appOrigin, appHost, appId, providerId, dataDir, file, metricsUrl } = prepared;
  return { server, port, portalOrigin, appOrigin, appHost, appId, providerId, dataDir, file, metricsUrl, answeringPids };
}

/** The node:cluster workers of a primary: its child processes but the development IdP and demo app it runs beside them. */
function workerPids(primary: number): number[] {
  return childPids(primary).filter((pid) => {
    const command = commandLine(pid).join(' ');
    return command !== '' && !command.includes('dev-idp') && !command.includes('demo-app');
  });
}

/**
 * Polls /readyz until the database is reachable, then the sign-in page's provider list until every
 * provider answers (discovered and checked; the public /readyz tells strangers the status alone, and a
 * metrics listener is not always configured here).
 */
async function waitUntilReady(server: ServerProcess, port: number, portalOrigin: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!server.running) throw new Error(`${server.name} exited during start:\n${server.tail()}`);
    try {
      const response = await httpGet({ port, path: '/readyz', timeoutMs: 2_000 });
      last = `${response.status} ${response.body}`;
      if (response.status === 200) {
        const offered = await httpGet({ port, path: '/api/providers', headers: { host: new URL(portalOrigin).host, accept: 'application/json' }, timeoutMs: 4_000 });
        last = `${offered.status} ${offered.body}`;
        const { providers } = JSON.parse(offered.body) as { providers: Array<{ id: string; availability: string }> };
        if (offered.status === 200 && providers.length > 0 && providers.every((p) => p.availability === 'available')) return;
      }
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${server.name} not ready after ${timeoutMs} ms (last /readyz: ${last}):\n${server.tail()}`);
}
