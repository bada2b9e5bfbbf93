import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { subjectFor } from '../../../dev-idp/src/defaultUsers.js';
import { formAction, ScriptedBrowser } from '../integration/support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from '../integration/support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import type { Bindings } from './client.js';
import { APPS, PROVIDER, USER } from './model.js';
import { startRecordingUpstreams, type RecordingUpstreams } from './upstream.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const serverEntry = fileURLToPath(new URL('./server.ts', import.meta.url));

export interface FuzzEnvironment {
  port: number;
  portal: string;
  idp: DevIdpProcess;
  upstreams: RecordingUpstreams;
  bindings: Bindings;
  /** Whether the Gatehouse process is still running, and what it last wrote to stderr. */
  alive(): boolean;
  stderrTail(): string;
  /** Signs bob in again (fresh portal and app cookies), e.g. after a fuzz request ended his session. */
  signIn(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The real thing on loopback: the development IdP process, two recording upstreams, and Gatehouse in its
 * own process with two apps of different policies and loopback 127.0.0.1 (only) as a trusted proxy;
 * then bob signs in for real and opens both apps, so requests can carry his cookies.
 */
export async function startEnvironment(): Promise<FuzzEnvironment> {
  const port = await freePort();
  const portal = `http://localhost:${port}`;
  const idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/${PROVIDER}`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  const upstreams = await startRecordingUpstreams();
  const config = {
    port,
    // 127.0.0.1 is the trusted proxy; the harness's "untrusted" peer connects from 127.0.0.2.
    trustedProxies: ['127.0.0.1/32'],
    providers: [
      { id: PROVIDER, name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] },
    ],
    apps: Object.values(APPS).map((app) => ({
      id: app.id,
      name: app.id,
      publicUrl: `http://${app.hostname}:${port}`,
      upstream: upstreams.url[app.id],
      publicPaths: app.publicPaths,
      corsPreflight: app.corsPreflight,
      compress: app.compress,
      policy: { allow: [{ groups: app.allowGroups }] },
    })),
  };
  let stderr = '';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', serverEntry], {
    cwd: root,
    env: { ...process.env, FUZZ_GATEHOUSE_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8_000)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Gatehouse did not start: ${stderr}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Gatehouse exited (${code}) while starting: ${stderr}`));
    });
  });

  const bindings: Bindings = { port, wikiCookie: '', vaultCookie: '', portalCookie: '', csrf: '', idpIssuer: idp.issuer, bobSub: subjectFor(USER.login) };

  async function signIn(): Promise<void> {
    const browser = new ScriptedBrowser(['localhost', ...Object.values(APPS).map((app) => app.hostname)]);
    const start = await browser.request(`${portal}/.gatehouse/sign-in/${PROVIDER}?rd=/account`);
    const { hop: form } = await browser.follow(start);
    const posted = await browser.request(new URL(formAction(form.body)!, form.url).href, { form: { login: USER.login, password: USER.password } });
    const { stoppedAt } = await browser.follow(posted, (url) => url.pathname.startsWith('/.gatehouse/callback/'));
    if (!stoppedAt) throw new Error('the IdP did not send the browser back to Gatehouse');
    await browser.request(stoppedAt.href);
    bindings.portalCookie = browser.cookie('localhost', 'gatehouse_session') ?? '';
    // The handshake gives an app cookie even where the policy then says no (vault): "signed in, not permitted".
    for (const app of Object.values(APPS)) {
      const first = await browser.request(`http://${app.hostname}:${port}/`, { headers: { accept: 'text/html' } });
      await browser.follow(first);
    }
    bindings.wikiCookie = browser.cookie(APPS.wiki.hostname, 'gatehouse_app') ?? '';
    bindings.vaultCookie = browser.cookie(APPS.vault.hostname, 'gatehouse_app') ?? '';
    // What the sign-in itself made reach the apps is not the fuzz run's.
    upstreams.takeUntagged();
    const csrf = await browser.request(`${portal}/api/csrf`);
    bindings.csrf = (JSON.parse(csrf.body) as { csrfToken: string }).csrfToken;
    if (!bindings.portalCookie || !bindings.wikiCookie || !bindings.vaultCookie || !bindings.csrf) {
      throw new Error(`bob's sign-in did not give every cookie: ${JSON.stringify({ ...bindings, idpIssuer: undefined })}`);
    }
  }

  try {
    await signIn();
  } catch (error) {
    child.kill('SIGTERM');
    await upstreams.close();
    await idp.close();
    throw error;
  }

  return {
    port,
    portal,
    idp,
    upstreams,
    bindings,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderrTail: () => stderr,
    signIn,
    async close() {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      await upstreams.close();
      await idp.close();
    },
  };
}
