import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startDevIdpProcess, type DevIdpProcess } from '../../packages/server/test/integration/support/devIdpProcess.js';
import { startPostgres, type TestPostgres } from '../../packages/server/test/support/postgres.js';
import { nginxMainConfig } from './nginxConfig.js';
import { freePort } from './stack.js';

/**
 * Two Gatehouse nodes on one PostgreSQL behind Debian's nginx, round-robin, as a high-availability
 * deployment runs them: each node is the built server (`dist/main.js start`) in production mode, from
 * the same configuration file but for the port it listens on — the same public URL (nginx's), the same
 * database, the same secrets. The development IdP and the demo app run as processes of their own, the
 * IdP configured on both nodes as an ordinary provider. nginx runs the configuration of
 * docs/deploy/high-availability.md.
 *
 * nginx picks a node per request. A request carrying the cookie `lb_node=a` (or `b`) goes to that node
 * only, so a test can say where each step happens (a browser sets the cookie on each host it visits);
 * every answer names the node(s) that served it in `X-Served-By` (nginx's `$upstream_addr`).
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const main = path.join(root, 'packages/server/dist/main.js');
const demoMain = path.join(root, 'packages/demo-app/dist/main.js');
const deployDir = path.join(root, 'docs/deploy');

export type NodeName = 'a' | 'b';

export interface ClusterNode {
  name: NodeName;
  port: number;
  /** Its metrics listener's readiness report (`GET /readyz` there: every check, as an operator reads it). */
  readinessUrl: string;
  /** The process id while it runs. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Ends it with a signal (`SIGKILL`: a crash) and waits until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again (after `kill`) and waits until it is ready. */
  start(): Promise<void>;
  /** What it logged so far (JSON lines). */
  logs(): string;
}

export interface Cluster {
  /** The portal's origin, through nginx: `http://localhost:<port>`. */
  portalUrl: string;
  /** nginx's port: every host (the portal, the apps) is served there. */
  port: number;
  /** An app's origin through nginx, e.g. appUrl('whoami') is `http://whoami.localhost:<port>`. */
  appUrl(app: string): string;
  /** The demo app (the upstream of every app here), directly. */
  demoUrl: string;
  idpUrl: string;
  nodes: Record<NodeName, ClusterNode>;
  postgres: TestPostgres;
  databaseUrl: string;
  /** Runs SQL on the nodes' database (a connection of the test's own). */
  query<Row extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
  /** The end of nginx's error log and of every node's log: for failure reports. */
  logs(): string;
  stop(): Promise<void>;
}

/** The cookie that pins a request to one node (see the nginx configuration below). */
export const NODE_COOKIE = 'lb_node';

/** The app hosts nginx serves (besides the portal): the config's whoami, and one a test adds in the console. */
const APP_IDS = ['whoami', 'reports'];

/** Which node served an answer, from its `X-Served-By` header (the last one nginx tried). */
export function servedBy(cluster: Pick<Cluster, 'nodes'>, header: string | null | undefined): NodeName | undefined {
  const last = header?.split(',').pop()?.trim();
  return (['a', 'b'] as const).find((name) => last === `127.0.0.1:${cluster.nodes[name].port}`);
}

export interface ClusterOptions {
  /**
   * The database URL the nodes are configured with, from the real one: e.g. through a relay the test
   * controls. Both nodes get the same.
   */
  nodesDatabaseUrl?: (databaseUrl: string) => string | Promise<string>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const stops: Array<() => Promise<void> | void> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) {
      try {
        await stop();
      } catch {
        // keep stopping the rest
      }
    }
  };
  try {
    const postgres = await startPostgres();
    stops.push(() => postgres.stop());
    const databaseUrl = await postgres.createDatabase();
    const nodesDatabaseUrl = (await options.nodesDatabaseUrl?.(databaseUrl)) ?? databaseUrl;
    const [lbPort, portA, portB, demoPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const [metricsA, metricsB] = [await freePort(), await freePort()];
    const portalUrl = `http://localhost:${lbPort}`;
    const appUrl = (app: string) => `http://${app}.localhost:${lbPort}`;

    const idp: DevIdpProcess = await startDevIdpProcess({
      redirectUris: [`${portalUrl}/.gatehouse/callback/dev`],
      postLogoutRedirectUris: [`${portalUrl}/signed-out`],
      backchannelLogoutUri: `${portalUrl}/.gatehouse/backchannel-logout/dev`,
      cookiePrefix: 'devidp',
    });
    stops.push(() => idp.close());

    const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-cluster-'));
    // nginx's workers run as another user when the tests run as root; they must reach their temp paths.
    chmodSync(dir, 0o755);
    stops.push(() => rmSync(dir, { recursive: true, force: true }));

    const demo = startDemoApp(demoPort, portalUrl, dir);
    stops.push(() => stopChild(demo));
    await waitUntil(async () => (await fetch(`http://localhost:${demoPort}/`)).ok, 'the demo app', () => readFileSync(path.join(dir, 'demo.log'), 'utf8'));

    const configFor = (port: number, metricsPort: number) =>
      JSON.stringify({
        mode: 'production',
        publicUrl: portalUrl,
        listen: { host: '127.0.0.1', port },
        // Where each node's checks are read (the public /readyz tells strangers the status alone).
        metrics: { listen: { host: '127.0.0.1', port: metricsPort } },
        dataDir: path.join(dir, 'data'),
        database: { url: nodesDatabaseUrl },
        log: { level: 'info', format: 'json' },
        secrets: sharedSecrets,
        trustedProxies: ['127.0.0.1'],
        // Tests sign in many times a minute from one address; the limit has tests of its own.
        signIn: { rateLimit: { max: 10_000 } },
        admins: { groups: [{ provider: 'dev', group: 'admins' }] },
        providers: [
          {
            id: 'dev',
            name: 'Development IdP',
            issuer: idp.issuer,
            clientId: 'gatehouse',
            clientSecret: 'gatehouse-dev-secret',
            scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
            createUsers: true,
            trustGroups: true,
          },
        ],
        apps: [
          {
            id: 'whoami',
            name: 'Whoami',
            publicUrl: appUrl('whoami'),
            upstream: `http://localhost:${demoPort}`,
            websockets: true,
            preserveHost: true,
            policy: { allow: [{ groups: ['staff'] }] },
          },
        ],
      });
    const sharedSecrets = {
      cookieKey: randomBytes(32).toString('base64url'),
      encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }],
    };
    const nodes = {
      a: clusterNode('a', portA, metricsA, dir, configFor(portA, metricsA)),
      b: clusterNode('b', portB, metricsB, dir, configFor(portB, metricsB)),
    };
    stops.push(() => nodes.a.kill('SIGTERM'), () => nodes.b.kill('SIGTERM'));
    // One after the other: the first migrates the new database and makes the signing key.
    await nodes.a.start();
    await nodes.b.start();

    const nginx = startNginx(dir, lbPort, portA, portB, ['localhost', ...APP_IDS.map((id) => new URL(appUrl(id)).hostname)]);
    stops.push(() => stopChild(nginx));
    await waitUntil(async () => (await send(`${portalUrl}/healthz`)).status === 200, 'nginx', () => readIfThere(path.join(dir, 'nginx', 'error.log')));

    // The test's own connection drops when PostgreSQL is restarted; a dropped one is opened again.
    let connected: Promise<pg.Client> | undefined;
    const connection = () =>
      (connected ??= (async () => {
        const fresh = new pg.Client({ connectionString: databaseUrl });
        fresh.on('error', () => (connected = undefined));
        await fresh.connect();
        return fresh;
      })());
    stops.push(async () => {
      const open = connected;
      connected = undefined;
      await (await open?.catch(() => undefined))?.end();
    });

    return {
      portalUrl,
      port: lbPort,
      appUrl,
      demoUrl: `http://localhost:${demoPort}`,
      idpUrl: idp.issuer,
      nodes,
      postgres,
      databaseUrl,
      async query<Row extends object>(text: string, values: unknown[] = []) {
        try {
          return (await (await connection()).query(text, values)).rows as Row[];
        } catch (error) {
          connected = undefined;
          throw error;
        }
      },
      logs: () =>
        [
          `--- nginx ---\n${readIfThere(path.join(dir, 'nginx', 'error.log')).slice(-8_000)}`,
          `--- node a ---\n${nodes.a.logs().slice(-12_000)}`,
          `--- node b ---\n${nodes.b.logs().slice(-12_000)}`,
        ].join('\n'),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function clusterNode(name: NodeName, port: number, metricsPort: number, dir: string, config: string): ClusterNode {
  const readinessUrl = `http://127.0.0.1:${metricsPort}/readyz`;
  const configFile = path.join(dir, `gatehouse-${name}.json`);
  writeFileSync(configFile, config, { mode: 0o600 });
  const logFile = path.join(dir, `node-${name}.log`);
  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const node: ClusterNode = {
    name,
    port,
    readinessUrl,
    get pid() {
      return running() ? child?.pid : undefined;
    },
    get running() {
      return running();
    },
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (!running()) return;
      await stopChild(child!, signal);
    },
    async start() {
      if (running()) return;
      const out = openSync(logFile, 'a');
      const started = spawn(process.execPath, [main, 'start', '--config', configFile], { cwd: dir, stdio: ['ignore', out, out] });
      child = started;
      // Should the test process end without its cleanup (a crash, Ctrl-C), the node ends with it.
      const onExit = () => started.kill('SIGKILL');
      process.once('exit', onExit);
      started.once('exit', () => process.off('exit', onExit));
      await waitUntil(
        async () => {
          if (!running()) throw new Error(`node ${name} exited (${started.exitCode ?? started.signalCode})`);
          const response = await fetch(readinessUrl);
          const body = (await response.json()) as { checks: { changes?: string; providers: Array<{ status: string }> } };
          // Listening for the other nodes' changes too: until then it bypasses its caches.
          return response.ok && body.checks.changes === 'listening' && body.checks.providers.every((provider) => provider.status === 'ready');
        },
        `node ${name}`,
        () => readIfThere(logFile),
      );
    },
    logs: () => readIfThere(logFile),
  };
  return node;
}

function startDemoApp(port: number, portalUrl: string, dir: string): ChildProcess {
  const out = openSync(path.join(dir, 'demo.log'), 'a');
  return spawn(process.execPath, [demoMain], {
    cwd: dir,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      DEMO_APP_PORT: String(port),
      // The demo verifies the signed assertion against the keys the nodes publish, through nginx.
      DEMO_APP_JWKS_URL: `${portalUrl}/.gatehouse/jwks.json`,
      DEMO_APP_ISSUER: portalUrl,
    },
  });
}

/**
 * nginx in front of both nodes, configured from the files an operator copies: docs/deploy/nginx.conf
 * (the default server that refuses unknown host names, and the WebSocket map) without its one-address
 * `upstream gatehouse`, as the guide says, and the nodes' block of docs/deploy/high-availability.md
 * (`upstream gatehouse` with both nodes, the portal's server block), with only the addresses and names
 * made local. What a test adds: the pin (`lb_node`) picks one node's upstream instead of both, and
 * `X-Served-By` names the node.
 */
function startNginx(dir: string, port: number, portA: number, portB: number, hosts: readonly string[]): ChildProcess {
  const home = path.join(dir, 'nginx');
  mkdirSync(home, { mode: 0o755 });
  const shipped = readFileSync(path.join(deployDir, 'nginx.conf'), 'utf8');
  const oneAddress = shipped.match(/^upstream gatehouse \{\n[\s\S]*?^\}\n/gm);
  if (oneAddress?.length !== 1) throw new Error('docs/deploy/nginx.conf no longer has one "upstream gatehouse" block for the guide to replace');
  const shared = replaceExactly(shipped, [
    ['listen LISTEN default_server;', `listen 127.0.0.1:${port} default_server;`],
    [oneAddress[0], ''],
  ]);
  const guide = readFileSync(path.join(deployDir, 'high-availability.md'), 'utf8');
  const block = /## Nodes behind nginx[\s\S]*?```nginx\n([\s\S]*?)```/.exec(guide)?.[1];
  if (!block) throw new Error('docs/deploy/high-availability.md has no nginx block under "Nodes behind nginx"');
  const nodes = replaceExactly(block, [
    ['server 10.0.0.11:4180', `server 127.0.0.1:${portA}`],
    ['server 10.0.0.12:4180', `server 127.0.0.1:${portB}`],
    ['listen 443 ssl;', `listen 127.0.0.1:${port};`],
    ['server_name auth.example.com wiki.example.com;', `server_name ${hosts.join(' ')};`],
    ['proxy_pass http://gatehouse;', 'proxy_pass http://$gatehouse_pool;\n        add_header X-Served-By $upstream_addr always;'],
  ]);
  writeFileSync(
    path.join(home, 'nginx.conf'),
    nginxMainConfig(
      home,
      `
    # The test's pin: one node's upstream, or both (round-robin) without the cookie.
    upstream gatehouse_node_a { server 127.0.0.1:${portA}; keepalive 4; }
    upstream gatehouse_node_b { server 127.0.0.1:${portB}; keepalive 4; }
    map $cookie_${NODE_COOKIE} $gatehouse_pool {
        default gatehouse;
        a       gatehouse_node_a;
        b       gatehouse_node_b;
    }

${shared}
${nodes}`,
      1024,
    ),
  );
  const out = openSync(path.join(home, 'nginx.out'), 'a');
  const nginx = process.env.NGINX_PATH ?? ['/usr/sbin/nginx', '/usr/bin/nginx'].find((candidate) => existsSync(candidate)) ?? 'nginx';
  return spawn(
    nginx,
    ['-p', `${home}/`, '-e', path.join(home, 'error.log'), '-c', path.join(home, 'nginx.conf'), '-g', `daemon off; pid ${path.join(home, 'nginx.pid')};`],
    { cwd: home, stdio: ['ignore', out, out] },
  );
}

/** Replaces each exact text once; one the documented file no longer has is an error (docs and tests must not drift). */
function replaceExactly(text: string, replacements: ReadonlyArray<readonly [string, string]>): string {
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`the documented nginx configuration no longer has "${from}"`);
    text = text.replace(from, () => to);
  }
  return text;
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(force);
}

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function waitUntil(ready: () => Promise<boolean>, what: string, logs: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await ready()) return;
    } catch (error) {
      last = error;
      if (error instanceof Error && error.message.includes('exited')) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`${what} did not become ready (${last instanceof Error ? last.message : 'timed out'}):\n${logs()}`);
}

/**
 * One HTTP request on a connection of its own (so nginx picks a node for each), optionally pinned to a
 * node, with the answer read whole. For the tests that drive traffic without a browser.
 */
export function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; node?: NodeName; timeoutMs?: number } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(url);
  const headers: Record<string, string> = { ...init.headers };
  if (init.node) headers.cookie = [headers.cookie, `${NODE_COOKIE}=${init.node}`].filter(Boolean).join('; ');
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        headers: { host: target.host, connection: 'close', ...headers, ...(init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}) },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.setTimeout(init.timeoutMs ?? 10_000, () => request.destroy(new Error(`no answer from ${url} in ${init.timeoutMs ?? 10_000} ms`)));
    request.end(init.body);
  });
}
