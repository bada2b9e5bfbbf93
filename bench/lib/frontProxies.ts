import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signInToApp } from './browser.js';
import { startGatehouse, type RunningGatehouse } from './gatehouse.js';
import { httpGet, type Answer } from './http.js';
import type { Measurement, Scenario, ScenarioName } from './load.js';
import { cpuSecondsWithChildren, freePort, type ProcessGroup, type ServerProcess } from './processes.js';
import { fixed, spread, table, thousands, type Spread } from './stats.js';

/**
 * Forward-auth as an operator deploys it: Debian's nginx with `auth_request` and Debian's Caddy with
 * `forward_auth`, each configured from the files people copy (docs/deploy/nginx.conf with nginx-app.conf,
 * docs/deploy/Caddyfile; only their placeholders substituted), in front of an upstream.mjs of their own.
 * Each proxy serves the same site twice, on two ports: once asking Gatehouse (a node of its own, whose
 * apps are these sites), once asking a bare Fastify handler (bare.mjs) that answers exactly what Gatehouse
 * answers that proxy, with no check. The same proxy process, the same request, the same upstream: only
 * the server behind the check differs.
 */
export type ProxyKind = 'nginx' | 'caddy';

export interface FrontProxy {
  kind: ProxyKind;
  /** How the report names it. */
  label: string;
  /** The site that asks Gatehouse, and the same site asking the bare handler. */
  viaGatehouse: ScenarioName;
  viaBare: ScenarioName;
  /** The proxy's process (nginx: its master; the workers are its children, counted with it). */
  server: ServerProcess;
  /** The names under which a measurement's `cpu.helpers` holds the proxy's CPU and the upstream's. */
  proxyCpu: string;
  upstreamCpu: string;
}

export interface FrontProxiesSetup {
  proxies: FrontProxy[];
  scenarios: Scenario[];
  /** Measured back to back in each round, the order flipped every other round. */
  groups: ScenarioName[][];
  servers: ServerProcess[];
  node: RunningGatehouse;
}

const SCENARIOS: Record<ProxyKind, { viaGatehouse: ScenarioName; viaBare: ScenarioName; label: string; appId: string; check: string }> = {
  // nginx's auth_request asks /.gatehouse/auth/<app>; Caddy's forward_auth /.gatehouse/forward-auth/<app>
  // (docs/deploy/nginx-app.conf, docs/deploy/Caddyfile).
  nginx: { viaGatehouse: 'nginx-auth-request', viaBare: 'nginx-auth-request-bare', label: 'nginx auth_request', appId: 'bench-nginx', check: '/.gatehouse/auth/' },
  caddy: { viaGatehouse: 'caddy-forward-auth', viaBare: 'caddy-forward-auth-bare', label: 'Caddy forward_auth', appId: 'bench-caddy', check: '/.gatehouse/forward-auth/' },
};

const deployDir = (root: string) => path.join(root, 'docs/deploy');

/**
 * A documented configuration file with its placeholders (whole words such as GATEHOUSE_UPSTREAM)
 * replaced. A placeholder the file no longer has stops the run: the bench must measure the file as it
 * is documented, not a copy that drifted from it.
 */
async function renderDeployFile(root: string, file: string, values: Record<string, string>): Promise<string> {
  const text = await readFile(path.join(deployDir(root), file), 'utf8');
  const missing = Object.keys(values).filter((name) => !new RegExp(`\\b${name}\\b`).test(text));
  if (missing.length) throw new Error(`docs/deploy/${file} has no placeholder ${missing.join(', ')}`);
  return text.replace(new RegExp(`\\b(${Object.keys(values).join('|')})\\b`, 'g'), (name) => values[name]!);
}

export async function setUpFrontProxies(input: {
  processes: ProcessGroup;
  root: string;
  workDir: string;
  kinds: readonly ProxyKind[];
  nodeArgs: readonly string[];
  /**
   * The proxies' folders are added here as they are made (outside the work folder, which only its owner
   * may enter: nginx's workers run as another user when this runs as root); the caller removes them once
   * the processes have stopped, whether or not the setup finished.
   */
  folders: string[];
}): Promise<FrontProxiesSetup> {
  const { processes, root, folders } = input;
  const upstream = processes.start('forward-auth-upstream', [path.join(root, 'bench/upstream.mjs')], { cwd: root });
  const upstreamPort = Number((await upstream.waitForOutput(/listening (\d+)/, 15_000))[1]);
  // The bare handler is configured into the proxies before it starts (it needs the answers Gatehouse
  // gives, which need a sign-in through the proxies): its port is chosen now.
  const barePort = await freePort();
  const ports = new Map<ProxyKind, { gatehouse: number; bare: number }>();
  for (const kind of input.kinds) ports.set(kind, { gatehouse: await freePort(), bare: await freePort() });
  const host = (kind: ProxyKind) => `${SCENARIOS[kind].appId}.localhost`;
  // The app's address is the Gatehouse-backed site's; the bare-backed site is sent the very same Host header.
  const appHost = (kind: ProxyKind) => `${host(kind)}:${ports.get(kind)!.gatehouse}`;

  const node = await startGatehouse(processes, {
    root,
    workDir: input.workDir,
    upstreamPort,
    nodeArgs: input.nodeArgs,
    name: 'gatehouse-forward-auth',
    forwardAuthApps: input.kinds.map((kind) => ({ id: SCENARIOS[kind].appId, publicUrl: `http://${appHost(kind)}` })),
  });

  const started = new Map<ProxyKind, ServerProcess>();
  for (const kind of input.kinds) {
    const sites = ports.get(kind)!;
    const backends = [
      { port: sites.gatehouse, checker: node.port },
      { port: sites.bare, checker: barePort },
    ];
    const dir = await mkdtemp(path.join(tmpdir(), `gatehouse-bench-${kind}-`));
    folders.push(dir);
    started.set(kind, kind === 'nginx' ? await startNginx(processes, root, dir, host(kind), backends, upstreamPort, await freePort()) : await startCaddy(processes, root, dir, host(kind), backends, upstreamPort));
  }

  // alice signs in through each proxy's Gatehouse-backed site, as a browser would: the proxy sends the
  // signed-out request to Gatehouse's answer, /.gatehouse/start and /.gatehouse/complete go through it.
  const cookies = new Map<ProxyKind, string>();
  const answers: Record<string, Record<string, string>> = {};
  for (const kind of input.kinds) {
    const { appId, check } = SCENARIOS[kind];
    const signIn = await signInToApp({ appOrigin: `http://${appHost(kind)}`, portalOrigin: node.portalOrigin, providerId: node.providerId, login: 'alice@example.com', password: 'alice' });
    const cookie = `${signIn.cookieName}=${signIn.token}`;
    cookies.set(kind, cookie);
    // What Gatehouse answers this proxy's check, asked as the proxy asks it: the bare handler's answer.
    const answer = await httpGet({
      port: node.port,
      path: `${check}${appId}`,
      headers: { host: `127.0.0.1:${node.port}`, 'x-forwarded-proto': 'http', 'x-forwarded-host': appHost(kind), 'x-forwarded-uri': '/some/path', 'x-forwarded-method': 'GET', 'x-forwarded-for': '127.0.0.1', cookie },
    });
    if (answer.status !== 200) throw new Error(`${SCENARIOS[kind].label}: Gatehouse answered the check ${answer.status}, expected 200 with alice's identity`);
    answers[`${check}${appId}`] = Object.fromEntries(
      Object.entries(answer.headers).flatMap(([name, value]) => ((name.startsWith('x-gatehouse-') || name === 'cache-control') && typeof value === 'string' ? [[name, value]] : [])),
    );
  }
  const bare = processes.start('bare-forward-auth', [path.join(root, 'bench/bare.mjs'), '', JSON.stringify(answers)], { cwd: root, env: { BARE_PORT: String(barePort) } });
  await bare.waitForOutput(/listening (\d+)/, 15_000);

  const proxies: FrontProxy[] = [];
  const scenarios: Scenario[] = [];
  for (const kind of input.kinds) {
    const { viaGatehouse, viaBare, label } = SCENARIOS[kind];
    const server = started.get(kind)!;
    const sites = ports.get(kind)!;
    const headers = { host: appHost(kind), cookie: cookies.get(kind)! };
    // nginx's CPU is its master's and its workers' (the master's children); Caddy is one process.
    const helpers = kind === 'nginx' ? { helpers: [upstream], helperGroups: [{ name: server.name, cpuSeconds: () => cpuSecondsWithChildren(server.pid) }] } : { helpers: [upstream, server] };
    scenarios.push(
      { name: viaGatehouse, url: `http://127.0.0.1:${sites.gatehouse}/some/path`, headers, server: node.server, ...helpers },
      { name: viaBare, url: `http://127.0.0.1:${sites.bare}/some/path`, headers, server: bare, ...helpers },
    );
    proxies.push({ kind, label, viaGatehouse, viaBare, server, proxyCpu: server.name, upstreamCpu: upstream.name });
    await verifySites(label, sites, headers);
  }
  return {
    proxies,
    scenarios,
    groups: proxies.map(({ viaBare, viaGatehouse }) => [viaBare, viaGatehouse]),
    servers: [upstream, node.server, bare, ...started.values()],
    node,
  };
}

/**
 * Before any load: through both sites the upstream receives alice's identity, and without the cookie
 * the Gatehouse-backed site refuses (its check is in force) while the bare-backed one lets the request
 * through (it checks nothing).
 */
async function verifySites(label: string, sites: { gatehouse: number; bare: number }, headers: { host: string; cookie: string }): Promise<void> {
  const fail = (why: string, answer: Answer) => {
    throw new Error(`${label}: ${why} (got ${answer.status}, ${JSON.stringify(answer.headers)}, body ${JSON.stringify(answer.body.slice(0, 300))})`);
  };
  for (const port of [sites.gatehouse, sites.bare]) {
    const answer = await httpGet({ port, path: '/whoami', headers });
    if (answer.status !== 200 || answer.body !== 'alice@example.com') fail(`the upstream should have received X-Gatehouse-Email: alice@example.com through :${port}`, answer);
  }
  const signedOut = await httpGet({ port: sites.gatehouse, path: '/some/path', headers: { host: headers.host, accept: 'text/html' } });
  if (signedOut.status !== 302 || !signedOut.headers.location?.includes('/.gatehouse/start')) fail('a signed-out request should be sent to sign in', signedOut);
  const unchecked = await httpGet({ port: sites.bare, path: '/some/path', headers: { host: headers.host } });
  if (unchecked.status !== 200) fail('the bare handler lets every request through', unchecked);
}

/** Where Debian's nginx is, if it is installed. */
export function nginxPath(): string | undefined {
  return ['/usr/sbin/nginx', '/usr/bin/nginx'].find((candidate) => existsSync(candidate));
}

/** Polls a port until the proxy answers HTTP at all (what it answers is the checks' business). */
async function answering(server: ServerProcess, port: number, logs: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (!server.running) throw new Error(`${server.name} exited before it was ready:\n${server.tail()}\n${await logs()}`);
    if (await httpGet({ port, path: '/', timeoutMs: 1_000 }).then(() => true, () => false)) return;
    if (Date.now() > deadline) throw new Error(`${server.name} not answering on :${port} after 15 s:\n${await logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An `upstream NAME {…}` block of a rendered file: exactly one, or the run stops (the files drifted). */
function upstreamBlock(text: string, name: string): string {
  const blocks = text.match(new RegExp(`^upstream ${name} \\{\\n[\\s\\S]*?^\\}\\n`, 'gm'));
  if (blocks?.length !== 1) throw new Error(`docs/deploy/: expected one "upstream ${name}" block, found ${blocks?.length ?? 0}`);
  return blocks[0];
}

/**
 * Every use of the upstreams `names` (their blocks and `proxy_pass http://<name>`) under a name with
 * `suffix`: the second site's own pools, beside the first's in the same http {} block.
 */
function renameUpstreams(text: string, names: readonly string[], suffix: string): string {
  for (const name of names) {
    const uses = new RegExp(`(?<=^upstream |proxy_pass http://)${name}(?=[ ;/])`, 'gm');
    if (!uses.test(text)) throw new Error(`docs/deploy/: upstream ${name} is not used where the bench expects it`);
    text = text.replace(uses, `${name}${suffix}`);
  }
  return text;
}

/**
 * Debian's nginx: docs/deploy/nginx.conf (the shared part, its catch-all on a port of its own, its
 * `upstream gatehouse` the Gatehouse node) and docs/deploy/nginx-app.conf once per backend, inside a main
 * configuration shaped like Debian's /etc/nginx/nginx.conf (`worker_processes auto`, 768 connections a
 * worker, sendfile, tcp_nopush), with no access log (a line per request on both sides would only dilute
 * the difference measured) and everything it writes in its own folder. The bare handler's site is the
 * same file with its two upstreams (the checker's, copied from nginx.conf with the bare handler's
 * address, and the app's) under names of their own: the same pools, the same settings, only the checker
 * differs.
 */
async function startNginx(processes: ProcessGroup, root: string, dir: string, serverName: string, backends: ReadonlyArray<{ port: number; checker: number }>, upstreamPort: number, catchAllPort: number): Promise<ServerProcess> {
  const command = nginxPath() ?? 'nginx';
  const [first, ...others] = backends;
  const appPool = `gatehouse-app-${SCENARIOS.nginx.appId}`;
  const shared = (checker: number) => renderDeployFile(root, 'nginx.conf', { LISTEN: `127.0.0.1:${catchAllPort}`, GATEHOUSE_UPSTREAM: `127.0.0.1:${checker}` });
  const app = (port: number) =>
    renderDeployFile(root, 'nginx-app.conf', { LISTEN: `127.0.0.1:${port}`, SERVER_NAME: serverName, APP_ID: SCENARIOS.nginx.appId, APP_UPSTREAM: `127.0.0.1:${upstreamPort}` });
  const site = [
    await shared(first!.checker),
    await app(first!.port),
    ...(await Promise.all(
      others.map(async ({ port, checker }, index) => {
        const suffix = `-${index + 2}`;
        const checkerPool = renameUpstreams(upstreamBlock(await shared(checker), 'gatehouse'), ['gatehouse'], suffix);
        return `${checkerPool}\n${renameUpstreams(await app(port), ['gatehouse', appPool], suffix)}`;
      }),
    )),
  ].join('\n');
  await writeFile(path.join(dir, 'gatehouse.conf'), site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `    ${name}_temp_path ${JSON.stringify(path.join(dir, name))};`);
  await writeFile(
    path.join(dir, 'nginx.conf'),
    [
      'worker_processes auto;',
      'events { worker_connections 768; }',
      'http {',
      '    sendfile on;',
      '    tcp_nopush on;',
      '    types_hash_max_size 2048;',
      '    access_log off;',
      ...temp,
      `    include ${JSON.stringify(path.join(dir, 'gatehouse.conf'))};`,
      '}',
      '',
    ].join('\n'),
  );
  // As root, nginx's workers run as an unprivileged user: they must reach their folder.
  await chmod(dir, 0o755);
  const errorLog = path.join(dir, 'error.log');
  const server = processes.start('nginx', ['-p', `${dir}/`, '-e', errorLog, '-c', path.join(dir, 'nginx.conf'), '-g', `daemon off; pid ${path.join(dir, 'nginx.pid')};`], { cwd: dir, command });
  await answering(server, backends[0]!.port, () => readFile(errorLog, 'utf8').catch(() => ''));
  return server;
}

/**
 * Debian's Caddy: docs/deploy/Caddyfile once per backend, after a global options block of the bench's
 * own (no admin endpoint, no automatic HTTPS, loopback only, its data in its own folder), as the
 * end-to-end tests run it. No access log: Caddy keeps none unless a site asks for one.
 */
async function startCaddy(processes: ProcessGroup, root: string, dir: string, serverName: string, backends: ReadonlyArray<{ port: number; checker: number }>, upstreamPort: number): Promise<ServerProcess> {
  const sites = await Promise.all(
    backends.map(({ port, checker }) =>
      renderDeployFile(root, 'Caddyfile', {
        SITE_ADDRESS: `http://${serverName}:${port}`,
        APP_ID: SCENARIOS.caddy.appId,
        GATEHOUSE_UPSTREAM: `127.0.0.1:${checker}`,
        APP_UPSTREAM: `127.0.0.1:${upstreamPort}`,
      }),
    ),
  );
  if (sites.some((site) => /^\{/m.test(site))) throw new Error('docs/deploy/Caddyfile has a global options block; the bench adds its own');
  const options = ['{', '\tadmin off', '\tauto_https off', '\tdefault_bind 127.0.0.1', `\tstorage file_system ${JSON.stringify(path.join(dir, 'data'))}`, '}', ''];
  await writeFile(path.join(dir, 'Caddyfile'), [...options, ...sites].join('\n'));
  const server = processes.start('caddy-forward-auth', ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    cwd: dir,
    command: 'caddy',
    env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data') },
  });
  await answering(server, backends[0]!.port, async () => server.tail());
  return server;
}

/** Gatehouse behind each proxy against the bare handler behind it: req/s at least 0.95 × (issue 29). */
export const FRONT_PROXY_TARGET = 0.95;

export interface FrontProxiesReport {
  targets: Array<{ name: string; value: number; target: string; pass: boolean }>;
  /** Per proxy, ratios within a round (via Gatehouse / via the bare handler), their median and range. */
  ratios: Record<string, { rps: Spread; p99: Spread; checkerCpu: Spread; proxyCpu: Spread; totalCpu: Spread }>;
  /** Per scenario, medians of µs of CPU per request: the checker (Gatehouse or the bare handler), the proxy, the upstream. */
  cpu: Record<string, { checker: Spread; proxy: Spread; upstream: Spread; loadGenerator: Spread }>;
}

export function reportFrontProxies(setup: FrontProxiesSetup, measurements: readonly Measurement[], rounds: number, invalid: boolean, say: (line?: string) => void): FrontProxiesReport {
  const of = (name: ScenarioName, round: number) => measurements.find((m) => m.scenario === name && m.round === round);
  const all = (name: ScenarioName) => measurements.filter((m) => m.scenario === name);
  const roundNumbers = Array.from({ length: rounds }, (_, index) => index + 1);
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b === 0 ? Number.NaN : a / b);
  const total = (m: Measurement | undefined, proxy: FrontProxy) =>
    m?.cpu.server === undefined || m.cpu.helpers[proxy.proxyCpu] === undefined || m.cpu.helpers[proxy.upstreamCpu] === undefined
      ? undefined
      : m.cpu.server + m.cpu.helpers[proxy.proxyCpu]! + m.cpu.helpers[proxy.upstreamCpu]!;

  const report: FrontProxiesReport = { targets: [], ratios: {}, cpu: {} };
  for (const proxy of setup.proxies) {
    const perRound = (pick: (m: Measurement | undefined) => number | undefined) => spread(roundNumbers.map((round) => ratio(pick(of(proxy.viaGatehouse, round)), pick(of(proxy.viaBare, round)))));
    report.ratios[proxy.kind] = {
      rps: perRound((m) => m?.rps),
      p99: perRound((m) => m?.latency.p99),
      checkerCpu: perRound((m) => m?.cpu.server),
      proxyCpu: perRound((m) => m?.cpu.helpers[proxy.proxyCpu]),
      totalCpu: perRound((m) => total(m, proxy)),
    };
    for (const name of [proxy.viaBare, proxy.viaGatehouse]) {
      const ms = all(name);
      report.cpu[name] = {
        checker: spread(ms.map((m) => m.cpu.server ?? Number.NaN)),
        proxy: spread(ms.map((m) => m.cpu.helpers[proxy.proxyCpu] ?? Number.NaN)),
        upstream: spread(ms.map((m) => m.cpu.helpers[proxy.upstreamCpu] ?? Number.NaN)),
        loadGenerator: spread(ms.map((m) => m.cpu.loadGenerator)),
      };
    }
  }

  say('FORWARD-AUTH BEHIND nginx AND Caddy: each proxy configured from docs/deploy/, asking Gatehouse, and asking a bare handler that sends the same answer');
  say(
    table(
      ['round', ...setup.proxies.flatMap((proxy) => [`${proxy.label} → bare req/s`, '→ Gatehouse req/s', 'ratio'])],
      roundNumbers.map((round) => [
        String(round),
        ...setup.proxies.flatMap((proxy) => {
          const [bare, gatehouse] = [of(proxy.viaBare, round), of(proxy.viaGatehouse, round)];
          return [thousands(bare?.rps), thousands(gatehouse?.rps), fixed(ratio(gatehouse?.rps, bare?.rps), 2)];
        }),
      ]),
    ),
  );
  say();
  say(`medians over ${rounds} rounds [min–max]; CPU in µs per request`);
  say(
    table(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'checker CPU', 'proxy CPU', 'upstream CPU', 'load-gen CPU'],
      setup.proxies.flatMap((proxy) =>
        [proxy.viaBare, proxy.viaGatehouse].map((name) => {
          const ms = all(name);
          const rps = spread(ms.map((m) => m.rps));
          const p99 = spread(ms.map((m) => m.latency.p99));
          const cpu = report.cpu[name]!;
          return [
            name,
            `${thousands(rps.median)} [${thousands(rps.min)}–${thousands(rps.max)}]`,
            fixed(spread(ms.map((m) => m.latency.p50)).median, 2),
            `${fixed(p99.median, 2)} [${fixed(p99.min, 2)}–${fixed(p99.max, 2)}]`,
            fixed(cpu.checker.median, 1),
            fixed(cpu.proxy.median, 1),
            fixed(cpu.upstream.median, 1),
            fixed(cpu.loadGenerator.median, 1),
          ];
        }),
      ),
    ),
  );
  say("checker = the process behind auth_request / forward_auth: Gatehouse's node (not its development IdP) or the bare handler; proxy = nginx (master and workers) or Caddy; upstream = their upstream.mjs.");
  say();
  say(`ratios via Gatehouse / via the bare handler, computed per round, median over ${rounds} rounds`);
  say(
    table(
      ['ratio', 'median', 'min–max', 'target'],
      setup.proxies.flatMap((proxy) => {
        const r = report.ratios[proxy.kind]!;
        const row = (what: string, s: Spread, target = '') => [`${proxy.label}  ${what}`, fixed(s.median, 2), `${fixed(s.min, 2)}–${fixed(s.max, 2)}`, target];
        return [row('req/s', r.rps, `≥ ${FRONT_PROXY_TARGET.toFixed(2)}`), row('p99', r.p99), row('checker CPU/req', r.checkerCpu), row('proxy CPU/req', r.proxyCpu), row('all three CPU/req', r.totalCpu)];
      }),
    ),
  );
  for (const proxy of setup.proxies) {
    const value = report.ratios[proxy.kind]!.rps.median;
    const target = { name: `${proxy.label} → Gatehouse / → bare rps ratio`, value, target: `≥ ${FRONT_PROXY_TARGET.toFixed(2)}`, pass: value >= FRONT_PROXY_TARGET };
    report.targets.push(target);
    const shown = target.target.includes(fixed(value, 2)) ? fixed(value, 3) : fixed(value, 2);
    say(`${target.name} ${shown} (target ${target.target}) ${invalid ? 'INVALID RUN' : target.pass ? 'PASS' : 'MISS'}`);
  }
  return report;
}
