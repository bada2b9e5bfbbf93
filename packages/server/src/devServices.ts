import { endpoints, pages, routes } from '@gatehouse/contract';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import { DEMO_OIDC_APP_ID, DEV_IDP_CLIENT_ID, DEV_IDP_CLIENT_SECRET } from './config/defaults.js';
import type { Config } from './config/schema.js';

/**
 * Development mode only: the built-in IdP and the demo app run as real child processes beside the
 * portal, so `npm start` needs nothing else. They stop with the portal. One of them dying does not take
 * the portal (or the others) down: it is started again with backoff, and meanwhile its provider reads
 * unavailable on the sign-in page and in /readyz, as a real IdP that is down would.
 */
export interface DevServices {
  stop(): Promise<void>;
}

/** The first restart waits this long; each crash soon after the last doubles it, up to the maximum. */
export const RESTART_MIN_MS = 1_000;
export const RESTART_MAX_MS = 30_000;
/** A child that stayed up this long has recovered: its next crash waits the minimum again. */
export const STABLE_AFTER_MS = 30_000;

/** The wait before the next start of a child that exited: doubling while it keeps crashing. */
export function nextRestartDelay(previousDelay: number | undefined, upForMs: number): number {
  if (previousDelay === undefined || upForMs >= STABLE_AFTER_MS) return RESTART_MIN_MS;
  return Math.min(previousDelay * 2, RESTART_MAX_MS);
}

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));

interface Supervised {
  name: string;
  child: ChildProcess;
  restartTimer?: NodeJS.Timeout | undefined;
}

export async function startDevServices(config: Config, log: FastifyBaseLogger): Promise<DevServices> {
  const supervised: Supervised[] = [];
  let stopping = false;
  // Only while starting: a child that dies before it ever answered is a start that failed.
  let reportEarlyExit: (name: string) => void = () => {};
  const exitedEarly = new Promise<string>((resolve) => (reportEarlyExit = resolve));
  let started = false;
  const portalOrigin = new URL(config.publicUrl).origin;

  const launch = (name: string, script: string, env: Record<string, string>) => {
    const entry: Supervised = { name, child: spawnChild(script, env) };
    let delay: number | undefined;
    const watch = () => {
      const startedAt = Date.now();
      entry.child.on('exit', (code, signal) => {
        if (stopping) return;
        if (!started) {
          log.error({ service: name, code, signal }, `${name} stopped while starting`);
          reportEarlyExit(name);
          return;
        }
        delay = nextRestartDelay(delay, Date.now() - startedAt);
        log.error({ service: name, code, signal, restartInMs: delay }, `${name} stopped unexpectedly: starting it again in ${delay / 1000} s`);
        entry.restartTimer = setTimeout(() => {
          entry.restartTimer = undefined;
          if (stopping) return;
          entry.child = spawnChild(script, env);
          log.info({ service: name, pid: entry.child.pid }, `${name} started again`);
          watch();
        }, delay);
        entry.restartTimer.unref();
      });
    };
    watch();
    supervised.push(entry);
  };

  const stop = async () => {
    stopping = true;
    for (const entry of supervised) clearTimeout(entry.restartTimer);
    await Promise.all(supervised.map(({ child }) => stopChild(child)));
  };

  try {
    for (const idp of config.development.idps) {
      const issuer = `http://localhost:${idp.port}`;
      launch(`dev-idp ${idp.providerId}`, 'dev-idp/dist/main.js', {
        DEV_IDP_PORT: String(idp.port),
        DEV_IDP_ISSUER: issuer,
        DEV_IDP_NAME: idp.name,
        DEV_IDP_USER_SET: idp.users,
        // Every dev IdP shares the host "localhost", and cookies do not isolate by port.
        DEV_IDP_COOKIE_PREFIX: `${idp.providerId}idp`,
        DEV_IDP_CLIENT_ID: DEV_IDP_CLIENT_ID,
        DEV_IDP_CLIENT_SECRET: DEV_IDP_CLIENT_SECRET,
        DEV_IDP_REDIRECT_URIS: `${portalOrigin}${endpoints.callbackUrl(idp.providerId)}`,
        DEV_IDP_POST_LOGOUT_REDIRECT_URIS: `${portalOrigin}${pages.signedOut.path}`,
        DEV_IDP_BACKCHANNEL_LOGOUT_URI: `${portalOrigin}${endpoints.backchannelLogoutUrl(idp.providerId)}`,
        DEV_IDP_DATA_DIR: path.join(config.dataDir, 'dev-idp', idp.providerId),
      });
    }
    await Promise.all(
      config.development.idps.map((idp) =>
        waitFor(`http://localhost:${idp.port}/.well-known/openid-configuration`, `dev-idp ${idp.providerId}`, exitedEarly),
      ),
    );
    const demo = config.development.demoApp;
    if (demo !== false) {
      launch('demo-app', 'demo-app/dist/main.js', {
        DEMO_APP_PORT: String(demo.port),
        // The demo verifies the signed assertion against Gatehouse's published keys, as real apps can.
        DEMO_APP_JWKS_URL: `${portalOrigin}${routes.operations.getJwks.path}`,
        DEMO_APP_ISSUER: portalOrigin,
        ...demoOidcEnv(config, demo.port, portalOrigin),
      });
      await waitFor(`http://localhost:${demo.port}/`, 'demo-app', exitedEarly);
    }
    started = true;
    for (const { name, child } of supervised) log.info({ service: name, pid: child.pid }, `${name} started`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}

/**
 * "Sign in with Gatehouse" in the demo: on when the configuration has the demo's OpenID Connect app
 * (the development defaults do). The demo learns its client id and own origin from that app, and the
 * guarded address to link to from the first app Gatehouse guards in front of it. No secret: the default
 * app is a public client with PKCE (config/defaults.ts).
 */
export function demoOidcEnv(config: Config, demoPort: number, portalOrigin: string): Record<string, string> {
  const app = config.apps.find((candidate) => candidate.id === DEMO_OIDC_APP_ID && candidate.oidc);
  if (!app?.oidc) return {};
  const guarded = config.apps.find((candidate) => candidate.guard && candidate.upstream && new URL(candidate.upstream).port === String(demoPort));
  return {
    DEMO_APP_OIDC_ISSUER: portalOrigin,
    DEMO_APP_OIDC_CLIENT_ID: app.oidc.clientId ?? app.id,
    DEMO_APP_PUBLIC_URL: app.publicUrl,
    ...(guarded ? { DEMO_APP_GUARDED_URL: guarded.publicUrl } : {}),
  };
}

function spawnChild(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [path.join(packagesDir, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

async function waitFor(url: string, name: string, exitedEarly: Promise<string>, timeoutMs = 30_000): Promise<void> {
  let dead = false;
  void exitedEarly.then(() => (dead = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !dead) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`${name} did not start (${url})`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
