import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { importJWK, SignJWT, type JWTPayload } from 'jose';

const devIdpMain = fileURLToPath(new URL('../../../dev-idp/dist/main.js', import.meta.url));

/** A free loopback port, for a server whose URL must be known before it starts (registered URIs). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RegisteredClient {
  clientId: string;
  /** Without one, a public client (`none`, PKCE), as `npm start` registers the demo. */
  clientSecret?: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string;
}

export interface OpenIdProvider {
  issuer: string;
  /** Signs claims with the OP's own ID-token key (RS256), as the OP would: for tokens it never issues. */
  signAsOp(header: Record<string, unknown>, payload: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

/**
 * The OpenID Provider the demo signs in with: a real OP process. Today the development IdP (itself
 * oidc-provider), with the clients registered; the tests use only its issuer, discovery and the
 * standard endpoints, and `signAsOp` (its signing key from its data folder).
 */
export async function startOpenIdProvider(clients: RegisteredClient[]): Promise<OpenIdProvider> {
  if (!existsSync(devIdpMain)) throw new Error('The development IdP is not built: run `npm run build` first.');
  const port = await freePort();
  const issuer = `http://localhost:${port}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'demo-op-'));
  const child: ChildProcess = spawn(process.execPath, [devIdpMain], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DEV_IDP_PORT: String(port),
      DEV_IDP_ISSUER: issuer,
      DEV_IDP_CONFIG: JSON.stringify({ clients: clients.map((client) => ({ ...client, clientName: client.clientId, ...(client.clientSecret ? {} : { tokenEndpointAuthMethod: 'none' }) })), dataDir }),
    },
  });
  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 20_000;
  let up = false;
  while (!up && Date.now() < deadline && child.exitCode === null) {
    try {
      up = (await fetch(`${issuer}/.well-known/openid-configuration`)).ok;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  if (!up) {
    await close();
    throw new Error(`the OpenID Provider did not start on ${issuer}`);
  }
  const signAsOp = async (header: Record<string, unknown>, payload: JWTPayload) => {
    const stored = JSON.parse(readFileSync(path.join(dataDir, 'dev-idp-keys.json'), 'utf8')) as { signingKeys: Array<Record<string, unknown>> };
    const jwk = stored.signingKeys.find((key) => key.alg === 'RS256')!;
    const published = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: Array<{ kid: string; n?: string }> };
    const kid = published.keys.find((key) => key.n === jwk.n)!.kid;
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid, ...header }).sign(await importJWK(jwk, 'RS256'));
  };
  return { issuer, signAsOp, close };
}

/** A browser stand-in: cookies kept per host, redirects followed one by one (never across a form). */
export class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const { hostname } = new URL(url);
    const jar = this.jars.get(hostname) ?? new Map<string, string>();
    this.jars.set(hostname, jar);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie) || /max-age=0/i.test(cookie)) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }

  /** GETs the URL and follows redirects; the last answer and its URL. */
  async follow(url: string, init: RequestInit = {}): Promise<{ response: Response; url: string }> {
    let response = await this.request(url, init);
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops++) {
      url = new URL(response.headers.get('location')!, url).href;
      response = await this.request(url);
    }
    return { response, url };
  }

  cookie(hostname: string, name: string): string | undefined {
    return this.jars.get(hostname)?.get(name);
  }
}

export const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** What an OP posted to a back-channel logout URI, and what the relying party answered. */
export interface Delivery {
  path: string;
  logoutToken: string;
  status: number;
}

/**
 * Where the OP delivers back-channel logout: it records each logout token (so a test can replay or
 * misdirect a real one) and passes the demo's on to the demo unchanged, answering with the demo's status.
 */
export async function startLogoutRelay(demoBackchannelUrl: () => string) {
  const deliveries: Delivery[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const logoutToken = new URLSearchParams(body).get('logout_token') ?? '';
      const path = request.url ?? '/';
      const answer = async () => {
        if (path !== '/demo') return 200;
        const relayed = await fetch(demoBackchannelUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        return relayed.status;
      };
      answer().then(
        (status) => {
          deliveries.push({ path, logoutToken, status });
          response.writeHead(status).end();
        },
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, deliveries, close: () => new Promise((resolve) => server.close(resolve)) };
}
