import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './stack.js';

const main = fileURLToPath(new URL('../../packages/dev-idp/dist/main.js', import.meta.url));

export interface ExtraIdp {
  issuer: string;
  stop(): Promise<void>;
}

/**
 * One more development IdP as a separate process, for a provider an admin adds in the console: it knows
 * Gatehouse as a client with exactly the redirect URIs given (as a real IdP registration would).
 */
export async function startExtraIdp(options: {
  name: string;
  cookiePrefix: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  users?: 'default' | 'partner';
  /** People of its own instead (DEV_IDP_CONFIG's users), so a spec's sign-ins meet nobody else's. */
  people?: Array<{ login: string; password: string; name: string }>;
}): Promise<ExtraIdp> {
  const port = await freePort();
  const issuer = `http://localhost:${port}`;
  const child: ChildProcess = spawn(process.execPath, [main], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DEV_IDP_PORT: String(port),
      DEV_IDP_ISSUER: issuer,
      DEV_IDP_NAME: options.name,
      DEV_IDP_COOKIE_PREFIX: options.cookiePrefix,
      DEV_IDP_USER_SET: options.users ?? 'partner',
      DEV_IDP_REDIRECT_URIS: options.redirectUris.join(','),
      DEV_IDP_POST_LOGOUT_REDIRECT_URIS: options.postLogoutRedirectUris.join(','),
      ...(options.people ? { DEV_IDP_CONFIG: JSON.stringify({ users: options.people }) } : {}),
    },
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      // Stopped already (a spec may stop it before its afterAll does).
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`${issuer}/.well-known/openid-configuration`)).ok) return { issuer, stop };
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`the extra development IdP did not start on ${issuer}`);
}
