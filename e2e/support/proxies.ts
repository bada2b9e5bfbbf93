import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page } from '@playwright/test';
import { renderNginxSite, renderTemplate } from './deployFiles.js';
import { nginxMainConfig } from './nginxConfig.js';
import { freePort } from './stack.js';

export { freePort };

/**
 * Debian's nginx and Caddy in front of a Gatehouse stack, on loopback, each run in the foreground as a
 * child process of the test. Their configuration is rendered from the very files people copy
 * (docs/deploy/nginx.conf and docs/deploy/Caddyfile): only the placeholders are substituted, and only
 * what a test needs besides (temporary paths, loopback only, no admin API, no certificates) is wrapped
 * around them.
 */

/** One app behind the proxy: a server block (nginx) or site block (Caddy) of its own. */
export interface ProxiedApp {
  /** The app's id in gatehouse.yaml: the block names it in its auth URL. */
  id: string;
  /** Its host name, and the port the proxy serves it on (127.0.0.1 only). */
  host: string;
  port: number;
  /** Where the proxy reaches the app, host:port. */
  upstream: string;
}

export interface ProxyOptions {
  /** The proxy's main port: nginx's default server (no catch-all) listens there. */
  port: number;
  /** The port Gatehouse (the portal) listens on. */
  gatehousePort: number;
  /** The apps, each in a block rendered from the documented file. */
  apps: readonly ProxiedApp[];
  /** Blocks as a person copied them from elsewhere (the console's page of an app), added after the apps'. */
  copiedBlocks?: readonly string[];
}

export interface RunningProxy {
  /** `http://127.0.0.1:<port>`: for requests that set the Host header themselves. */
  url: string;
  port: number;
  /** `http://<host>:<port>`: what a browser opens (Chromium resolves *.localhost to loopback). */
  origin(host: string): string;
  /** The configuration as rendered, and what the proxy logged so far: for failure reports. */
  config: string;
  logs(): string;
  stop(): Promise<void>;
}

export interface ApacheOptions {
  /** The port Apache serves the site on (127.0.0.1 only); the site's origin is `http://<host>:<port>`. */
  port: number;
  host: string;
  /** Gatehouse's publicUrl (the issuer), and the client registered there. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What Apache serves once a person is signed in: a proxied app (host:port) that sees the claims. */
  upstream: string;
}

/**
 * Debian's Apache httpd with mod_auth_openidc signing people in with Gatehouse: the site's directives are
 * docs/openid-provider/apache.conf as people copy it (only its placeholders substituted), inside a
 * virtual host of the test's own that proxies to `upstream`, with the modules a minimal httpd needs.
 */
export async function startApache(options: ApacheOptions): Promise<RunningProxy> {
  const apache = executable('Apache httpd', 'APACHE_PATH', ['/usr/sbin/apache2', '/usr/sbin/httpd']);
  const modules = ['/usr/lib/apache2/modules', '/usr/lib64/httpd/modules'].find((dir) => existsSync(path.join(dir, 'mod_auth_openidc.so')));
  if (!modules) throw new Error('mod_auth_openidc is not installed (Debian: libapache2-mod-auth-openidc). scripts/test.sh installs it.');
  const dir = temporaryDirectory('gatehouse-apache-');
  const appUrl = `http://${options.host}:${options.port}`;
  const site = renderTemplate(
    'apache.conf',
    { ISSUER: options.issuer, CLIENT_ID: options.clientId, CLIENT_SECRET: options.clientSecret, APP_URL: appUrl, PASSPHRASE: randomBytes(32).toString('base64url') },
    fileURLToPath(new URL('../../docs/openid-provider/', import.meta.url)),
  );
  const load = (name: string, file: string) => `LoadModule ${name}_module ${path.join(modules, `mod_${file}.so`)}`;
  const config = [
    `ServerRoot ${JSON.stringify(dir)}`,
    load('mpm_event', 'mpm_event'),
    load('authz_core', 'authz_core'),
    load('authn_core', 'authn_core'),
    load('authz_user', 'authz_user'),
    load('auth_openidc', 'auth_openidc'),
    load('proxy', 'proxy'),
    load('proxy_http', 'proxy_http'),
    `Listen 127.0.0.1:${options.port}`,
    `ServerName ${options.host}`,
    `PidFile ${JSON.stringify(path.join(dir, 'httpd.pid'))}`,
    `ErrorLog ${JSON.stringify(path.join(dir, 'error.log'))}`,
    'LogLevel warn auth_openidc:info',
    // As root, httpd serves from an unprivileged user (ignored when the tests run as one).
    'User nobody',
    'Group nogroup',
    `<VirtualHost 127.0.0.1:${options.port}>`,
    `  ServerName ${options.host}`,
    site.replace(/^/gm, '  '),
    // The redirect URI is mod_auth_openidc's own; everything else is the app's.
    '  ProxyPass /redirect_uri !',
    `  ProxyPass / http://${options.upstream}/`,
    '</VirtualHost>',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'httpd.conf'), config);
  const child = launch(apache, ['-f', path.join(dir, 'httpd.conf'), '-DFOREGROUND'], dir, {});
  const logs = () => ['apache2.out', 'error.log'].map((name) => readIfThere(path.join(dir, name))).join('');
  // SIGTERM: httpd stops its children at once and exits.
  return running(child, options.port, dir, config, logs, 'SIGTERM');
}

/** An executable from Debian's package, wherever this machine has it. */
function executable(name: string, envVariable: string, candidates: readonly string[]): string {
  const configured = process.env[envVariable];
  if (configured) return configured;
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`${name} is not installed (looked at ${candidates.join(', ')}; set ${envVariable}). scripts/test.sh installs it.`);
  return found;
}

/**
 * nginx with docs/deploy/nginx.conf (the shared part, once) and docs/deploy/nginx-app.conf (a server
 * block per app) included in a minimal main configuration of the test's own.
 */
export async function startNginx(options: ProxyOptions): Promise<RunningProxy> {
  const nginx = executable('nginx', 'NGINX_PATH', ['/usr/sbin/nginx', '/usr/bin/nginx']);
  const dir = temporaryDirectory('gatehouse-nginx-');
  const site = [
    renderNginxSite({
      listen: `127.0.0.1:${options.port}`,
      gatehouse: `127.0.0.1:${options.gatehousePort}`,
      apps: options.apps.map((app) => ({ id: app.id, host: app.host, listen: `127.0.0.1:${app.port}`, upstream: app.upstream })),
    }),
    ...(options.copiedBlocks ?? []),
  ].join('\n');
  writeFileSync(path.join(dir, 'gatehouse.conf'), site);
  // Everything nginx writes stays in the temporary folder; nginx creates the temp paths itself (and,
  // as root, hands them to its worker user).
  writeFileSync(path.join(dir, 'nginx.conf'), nginxMainConfig(dir, `    include ${JSON.stringify(path.join(dir, 'gatehouse.conf'))};`));
  const errorLog = path.join(dir, 'error.log');
  const child = launch(
    nginx,
    ['-p', `${dir}/`, '-e', errorLog, '-c', path.join(dir, 'nginx.conf'), '-g', `daemon off; pid ${path.join(dir, 'nginx.pid')};`],
    dir,
    {},
  );
  const logs = () => ['nginx.out', 'error.log'].map((name) => readIfThere(path.join(dir, name))).join('');
  // SIGTERM is nginx's fast shutdown: the master stops its workers and exits.
  return running(child, options.port, dir, site, logs, 'SIGTERM');
}

/** Caddy with docs/deploy/Caddyfile (a site block per app), after a global options block of the test's own. */
export async function startCaddy(options: ProxyOptions): Promise<RunningProxy> {
  const caddy = executable('caddy', 'CADDY_PATH', ['/usr/bin/caddy', '/usr/local/bin/caddy']);
  const dir = temporaryDirectory('gatehouse-caddy-');
  const site = [
    ...options.apps.map((app) =>
      renderTemplate('Caddyfile', {
        SITE_ADDRESS: `http://${app.host}:${app.port}`,
        APP_ID: app.id,
        GATEHOUSE_UPSTREAM: `127.0.0.1:${options.gatehousePort}`,
        APP_UPSTREAM: app.upstream,
      }),
    ),
    ...(options.copiedBlocks ?? []),
  ].join('\n');
  if (/^\{/m.test(site)) throw new Error('docs/deploy/Caddyfile has a global options block; the test adds its own');
  const config = `{
	admin off
	auto_https off
	default_bind 127.0.0.1
	storage file_system ${JSON.stringify(path.join(dir, 'data'))}
}

${site}`;
  writeFileSync(path.join(dir, 'Caddyfile'), config);
  const child = launch(caddy, ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], dir, {
    // Caddy saves its running config and state under these; keep them in the temporary folder.
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
  });
  const logs = () => readIfThere(path.join(dir, 'caddy.out'));
  return running(child, options.port, dir, config, logs, 'SIGTERM');
}

function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  // nginx's workers run as another user when the tests run as root; they must reach their temp paths.
  chmodSync(dir, 0o755);
  return dir;
}

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function launch(command: string, args: string[], dir: string, env: Record<string, string>): ChildProcess {
  const out = openSync(path.join(dir, `${path.basename(command)}.out`), 'a');
  return spawn(command, args, { cwd: dir, stdio: ['ignore', out, out], env: { ...process.env, ...env } });
}

/** Waits until the proxy answers HTTP, and gives the handle to stop it (always, and only once). */
async function running(
  child: ChildProcess,
  port: number,
  dir: string,
  config: string,
  logs: () => string,
  signal: NodeJS.Signals,
): Promise<RunningProxy> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  // Should the test process end without afterAll (a crash, Ctrl-C), the proxy ends with it.
  const onExit = () => {
    if (child.exitCode === null) child.kill(signal);
  };
  process.once('exit', onExit);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.off('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(force);
      }
      rmSync(dir, { recursive: true, force: true });
    })());

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !spawnError && child.exitCode === null) {
    try {
      // Any HTTP answer means it listens; what it answers is the tests' business.
      await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000), redirect: 'manual' });
      return { url, port, origin: (host) => `http://${host}:${port}`, config, logs, stop };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const why = spawnError?.message ?? (child.exitCode !== null ? `exited with code ${child.exitCode}` : 'did not answer within 15 s');
  const output = logs();
  await stop();
  throw new Error(`${path.basename(String(child.spawnfile))} ${why}:\n${output}\n--- configuration ---\n${config}`);
}

/**
 * A signed-out browser opens a URL on an app host (behind a proxy, or Gatehouse itself) and signs in as a
 * person would: the app host sends it to the portal's sign-in page, "Sign in with Development IdP", the
 * IdP's login form, and back through the app host's handshake to the very URL it asked for.
 */
export async function signInAtApp(page: Page, url: string, portalUrl: string, login: string, password: string): Promise<void> {
  await page.goto(url);
  await expect(page).toHaveURL((current) => current.origin === new URL(portalUrl).origin && current.pathname === '/sign-in');
  const devIdp = 'Sign in with Development IdP';
  await page.getByRole('link', { name: devIdp }).or(page.getByRole('button', { name: devIdp })).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(url);
}
