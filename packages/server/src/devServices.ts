import { endpoints, pages, routes } from '@gatehouse/contract';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import { DEV_IDP_CLIENT_ID, DEV_IDP_CLIENT_SECRET } from './config/defaults.js';
import type { Config } from './config/schema.js';

/**
 * Development mode only: the built-in IdP and the demo app run as real child processes beside the
 * portal, so `npm start` needs nothing else. They share the portal's lifetime: they stop with it, and
 * if one dies the portal stops too rather than run half a system.
 */
export interface DevServices {
  stop(): Promise<void>;
  /** Resolves when a child exits unexpectedly. */
  crashed: Promise<string>;
}

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));

export async function startDevServices(config: Config, log: FastifyBaseLogger): Promise<DevServices> {
  const children: Array<{ name: string; child: ChildProcess }> = [];
  let stopping = false;
  let reportCrash: (name: string) => void = () => {};
  const crashed = new Promise<string>((resolve) => (reportCrash = resolve));
  const portalOrigin = new URL(config.publicUrl).origin;

  const launch = (name: string, script: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, [path.join(packagesDir, script)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code, signal) => {
      if (!stopping) {
        log.error({ service: name, code, signal }, `${name} stopped unexpectedly`);
        reportCrash(name);
      }
    });
    children.push({ name, child });
  };

  const stop = async () => {
    stopping = true;
    await Promise.all(children.map(({ child }) => stopChild(child)));
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
      config.development.idps.map((idp) => waitFor(`http://localhost:${idp.port}/.well-known/openid-configuration`, `dev-idp ${idp.providerId}`, crashed)),
    );
    const demo = config.development.demoApp;
    if (demo !== false) {
      launch('demo-app', 'demo-app/dist/main.js', {
        DEMO_APP_PORT: String(demo.port),
        // The demo verifies the signed assertion against Gatehouse's published keys, as real apps can.
        DEMO_APP_JWKS_URL: `${portalOrigin}${routes.operations.getJwks.path}`,
        DEMO_APP_ISSUER: portalOrigin,
      });
      await waitFor(`http://localhost:${demo.port}/`, 'demo-app', crashed);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop, crashed };
}

async function waitFor(url: string, name: string, crashed: Promise<string>, timeoutMs = 30_000): Promise<void> {
  let dead = false;
  void crashed.then(() => (dead = true));
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
