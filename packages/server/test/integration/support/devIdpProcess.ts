import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/ports.js';

const main = fileURLToPath(new URL('../../../../dev-idp/dist/main.js', import.meta.url));

export interface DevIdpProcess {
  issuer: string;
  port: number;
  /** The process itself, for tests that stop, freeze (SIGSTOP) or kill it. */
  child: ChildProcess;
  close(): Promise<void>;
}

/** The development IdP as a real, separate process (as `npm start` runs it). */
export async function startDevIdpProcess(options: {
  port?: number;
  name?: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  controlToken?: string;
  backchannelLogoutUri?: string;
  userSet?: 'default' | 'partner';
  cookiePrefix?: string;
  /** People of its own (DEV_IDP_CONFIG's `users`: login, password, name, email, emailVerified, groups). */
  users?: Array<{ login: string; password: string; name: string; email?: string; emailVerified?: boolean; groups?: string[] }>;
}): Promise<DevIdpProcess> {
  if (!existsSync(main)) throw new Error('The development IdP is not built: run `npm run build` first.');
  const port = options.port ?? (await freePort());
  const issuer = `http://localhost:${port}`;
  const child: ChildProcess = spawn(process.execPath, [main], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DEV_IDP_PORT: String(port),
      DEV_IDP_ISSUER: issuer,
      DEV_IDP_NAME: options.name ?? 'Development IdP',
      DEV_IDP_REDIRECT_URIS: options.redirectUris.join(','),
      DEV_IDP_POST_LOGOUT_REDIRECT_URIS: options.postLogoutRedirectUris.join(','),
      ...(options.controlToken ? { DEV_IDP_CONTROL_TOKEN: options.controlToken } : {}),
      ...(options.backchannelLogoutUri ? { DEV_IDP_BACKCHANNEL_LOGOUT_URI: options.backchannelLogoutUri } : {}),
      ...(options.userSet ? { DEV_IDP_USER_SET: options.userSet } : {}),
      ...(options.cookiePrefix ? { DEV_IDP_COOKIE_PREFIX: options.cookiePrefix } : {}),
      ...(options.users ? { DEV_IDP_CONFIG: JSON.stringify({ users: options.users }) } : {}),
    },
  });
  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`${issuer}/.well-known/openid-configuration`)).ok) return { issuer, port, child, close };
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await close();
  throw new Error(`the development IdP did not start on ${issuer}`);
}
