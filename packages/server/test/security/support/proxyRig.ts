import { connect } from 'node:net';
import { expect } from 'vitest';
import { ScriptedBrowser, type Hop } from '../../integration/support/browser.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../../integration/support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from '../../integration/support/hostileIdp.js';
import { startUpstream, type Upstream } from '../../integration/support/upstream.js';

/**
 * Gatehouse as the reverse proxy in front of a real upstream that records what it received, on
 * loopback. Peers connect from 127.0.0.1 (untrusted) or from 127.0.0.2, the one trusted proxy
 * (Linux routes all of 127.0.0.0/8 to loopback), so one server shows both. Signing in goes through
 * the real handshake against a plain OIDC provider (its person is mallory@example.com).
 */
export interface ProxyRig {
  gatehouse: RunningGatehouse;
  upstream: Upstream;
  idp: HostileIdp;
  port: number;
  /** The protected app: `/public/*` is public, everything else needs mallory. */
  app: string;
  appHost: string;
  /** An app mallory may not open (admins only): its pages are the 403 ones. */
  closed: string;
  /** An app whose upstream hangs up on every connection. */
  down: string;
  close(): Promise<void>;
}

export const UNTRUSTED_PEER = '127.0.0.1';
export const TRUSTED_PROXY = '127.0.0.2';

export async function startProxyRig(): Promise<ProxyRig> {
  const idp = await startHostileIdp('gatehouse');
  const upstream = await startUpstream();
  const port = await freePort();
  const appHost = `echo.localhost:${port}`;
  const downPort = await freePort();
  const gatehouse = await startGatehouse({
    port,
    trustedProxies: [`${TRUSTED_PROXY}/32`],
    providers: [{ id: 'idp', name: 'Test IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [
      {
        id: 'echo',
        name: 'Echo',
        publicUrl: `http://${appHost}`,
        upstream: upstream.url,
        websockets: true,
        publicPaths: ['/public/*'],
        policy: { allow: [{ emails: ['mallory@example.com'] }] },
      },
      { id: 'closed', name: 'Closed app', publicUrl: `http://closed.localhost:${port}`, upstream: upstream.url, policy: { allow: [{ groups: ['admins'] }] } },
      // Nobody listens there (a port free a moment ago): every request is an upstream failure.
      { id: 'down', name: 'Down app', publicUrl: `http://down.localhost:${port}`, upstream: `http://127.0.0.1:${downPort}`, publicPaths: ['/public/*'], policy: { allow: [{ anyUser: true }] } },
    ],
  });
  return {
    gatehouse,
    upstream,
    idp,
    port,
    app: `http://${appHost}`,
    appHost,
    closed: `http://closed.localhost:${port}`,
    down: `http://down.localhost:${port}`,
    async close() {
      await gatehouse.close();
      await upstream.close();
      await idp.close();
    },
  };
}

export const LOOPBACK_HOSTS = ['echo.localhost', 'closed.localhost', 'down.localhost'];

/**
 * A browser signed in at the portal and, through the handshake, at the app host (the app's origin, the
 * echo app unless told). Its Cookie header for that host, and the page it landed on.
 */
export async function signIn(rig: ProxyRig, origin = rig.app, browser = new ScriptedBrowser(LOOPBACK_HOSTS)): Promise<{ browser: ScriptedBrowser; cookie: string; landing: Hop }> {
  const first = await browser.request(`${origin}/`, { headers: { accept: 'text/html' } });
  expect(first.status).toBe(302);
  let { hop } = await browser.follow(first);
  const signInPage = new URL(hop.url);
  if (signInPage.pathname === '/sign-in') {
    const start = await browser.request(`${rig.gatehouse.url}/.gatehouse/sign-in/idp?rd=${encodeURIComponent(signInPage.searchParams.get('rd')!)}`);
    ({ hop } = await browser.follow(start));
  }
  expect(new URL(hop.url).origin).toBe(origin);
  return { browser, cookie: browser.cookieHeader(new URL(origin).hostname), landing: hop };
}

export interface RawAnswer {
  status: number;
  /** Header names lower-cased; repeated ones joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` byte for byte on a new connection from `from` and reads the answer (one, then close). */
export function exchange(rig: ProxyRig, request: string, from = UNTRUSTED_PEER): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: rig.port, host: '127.0.0.1', localAddress: from }, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return reject(new Error(`no answer: ${JSON.stringify(text)}`));
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) });
    });
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

/**
 * A GET to the app host with these header lines exactly as given (names in any case or spelling, repeats
 * allowed), `Connection: close` added. The body is chunked-decoded if it came chunked.
 */
export async function rawGet(rig: ProxyRig, path: string, lines: ReadonlyArray<readonly [string, string]>, from = UNTRUSTED_PEER, host = rig.appHost): Promise<RawAnswer> {
  const head = [`GET ${path} HTTP/1.1`, `Host: ${host}`, ...lines.map(([name, value]) => `${name}: ${value}`), 'Connection: close'].join('\r\n');
  const answer = await exchange(rig, `${head}\r\n\r\n`, from);
  if (answer.headers['transfer-encoding'] === 'chunked') answer.body = unchunk(answer.body);
  return answer;
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 4 + size);
  }
}

/** What the recording upstream says it received (its answer is the request it saw, as JSON). */
export function received(answer: RawAnswer): { method: string; url: string; headers: Record<string, string> } {
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body) as { method: string; url: string; headers: Record<string, string> };
}
