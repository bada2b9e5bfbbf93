import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../packages/server/test/support/ports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Stack {
  portalUrl: string;
  ports: StackPorts;
  idpUrl: string;
  partnerIdpUrl: string;
  demoUrl: string;
  /** Gatehouse's data folder (its SQLite database), for a test that seeds what no flow on main makes yet. */
  dataDir: string;
  stop(): Promise<void>;
}

export { freePort, freePortBlock } from '../../packages/server/test/support/ports.js';

/**
 * Starts Gatehouse exactly as `npm start` does (the built server with its development services), but
 * on free ports and with a data folder of its own, from a config file like an operator would write.
 */
export interface StackPorts {
  portal: number;
  idp: number;
  partner: number;
  demo: number;
}

export interface StackOptions {
  /** More YAML appended to the generated config (e.g. apps for a proxy in front, trustedProxies). */
  extraConfig?: (ports: StackPorts) => string;
  /** Replaces the default apps (whoami and admin-demo on *.localhost at the portal's port). */
  apps?: (ports: StackPorts) => string;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const [portal, idp, partner, demo] = [await freePort(), await freePort(), await freePort(), await freePort()];
  // Where the stack's readiness is read, every check (the public /readyz tells strangers the status alone).
  const metrics = await freePort();
  const ports: StackPorts = { portal, idp, partner, demo };
  const apps =
    options.apps?.(ports) ??
    `apps:
  - { id: whoami, name: Whoami, publicUrl: "http://whoami.localhost:${portal}", upstream: "http://localhost:${demo}", websockets: true, preserveHost: true, policy: { allow: [{ groups: [staff] }] } }
  - { id: admin-demo, name: Admin demo, publicUrl: "http://admin-demo.localhost:${portal}", upstream: "http://localhost:${demo}", websockets: true, preserveHost: true, policy: { allow: [{ groups: [admins] }] } }
`;
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-e2e-'));
  const configFile = path.join(dir, 'gatehouse.yaml');
  writeFileSync(
    configFile,
    `publicUrl: http://localhost:${portal}
listen: { host: localhost, port: ${portal} }
dataDir: ${JSON.stringify(path.join(dir, 'data'))}
log: { level: warn, format: json }
# Every test signs in from the same loopback address, several times a minute on a fast machine: the
# default budget (30 sign-in requests a minute per client IP) is for people, and has tests of its own.
signIn: { rateLimit: { max: 1000 } }
metrics: { listen: { host: 127.0.0.1, port: ${metrics} } }
admins: { groups: [{ provider: dev, group: admins }] }
development:
  idps:
    - { port: ${idp}, providerId: dev, name: Development IdP, users: default, trustGroups: true }
    - { port: ${partner}, providerId: partner, name: Partner IdP, users: partner }
  demoApp: { port: ${demo} }
${apps}${options.extraConfig?.(ports) ?? ''}`,
  );
  const { stop } = await runGatehouse(dir, configFile, metrics);
  return {
    portalUrl: `http://localhost:${portal}`,
    ports,
    idpUrl: `http://localhost:${idp}`,
    partnerIdpUrl: `http://localhost:${partner}`,
    demoUrl: `http://localhost:${demo}`,
    dataDir: path.join(dir, 'data'),
    stop,
  };
}

/**
 * A Gatehouse of a spec's own, started as `npm start` starts it — the development defaults: the
 * development IdPs at `port` + 1 and + 3, the demo app at + 2, metrics at + 9 — on `port`, with the
 * YAML lines of `apps` as its apps list (none: the defaults' own). `name` names its temporary folder.
 */
export async function runDevelopmentGatehouse(name: string, port: number, apps: readonly string[] = []): Promise<{ stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), `gatehouse-${name}-`));
  const configFile = path.join(dir, 'gatehouse.yaml');
  const lines = ['extends: development-defaults', `listen: { port: ${port} }`, 'log: { level: warn, format: json }', ...(apps.length > 0 ? ['apps:', ...apps] : []), ''];
  writeFileSync(configFile, lines.join('\n'));
  return runGatehouse(dir, configFile, port + 9);
}

/**
 * Runs the built server on a config file in `dir` until its readiness (read on its metrics listener,
 * every check) says every provider is ready; `stop` ends it and removes `dir`.
 */
export async function runGatehouse(dir: string, configFile: string, metricsPort: number): Promise<{ stop(): Promise<void> }> {
  const logFile = path.join(dir, 'gatehouse.log');
  const out = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [path.join(root, 'packages/server/dist/main.js'), 'start', '--config', configFile], {
    cwd: dir,
    stdio: ['ignore', out, out],
    env: { ...process.env, NODE_ENV: 'test' },
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
      const body = (await response.json()) as { checks: { providers: Array<{ status: string }> } };
      if (response.ok && body.checks.providers.every((provider) => provider.status === 'ready')) return { stop };
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const log = readFileSync(logFile, 'utf8');
  await stop();
  throw new Error(`Gatehouse did not become ready:\n${log}`);
}
