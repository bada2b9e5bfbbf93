import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_TYPE, logoutTokenSigner, type ActiveSigningKey, type IdTokenAlgorithm, type LogoutClient, type LogoutClients, type LogoutTokenSigner } from '../../src/provide/backchannelDelivery.js';
import { OpStore } from '../../src/provide/opStore.js';
import type { EndedGrant } from '../../src/provide/sessionTies.js';
import type { Database } from '../../src/storage/schema.js';

/** What the OpenID Provider's tests of back-channel logout stand on: grants, keys, a receiving app. */

export const silentLog = pino({ enabled: false });

export interface GrantSeed {
  grantId?: string;
  appId: string;
  clientId?: string;
  sessionId: string;
  userId?: string;
  sid?: string;
  subject?: string;
  createdAt?: number;
}

/** Records a live grant (and a refresh token of it) through the OpenID Provider's store, as an authorization does. */
export async function seedGrant(db: Kysely<Database>, seed: GrantSeed): Promise<EndedGrant> {
  const now = seed.createdAt ?? Date.now();
  const store = new OpStore(db, () => now);
  const grant = await store.recordGrant({
    grantId: seed.grantId ?? randomUUID(),
    clientId: seed.clientId ?? seed.appId,
    appId: seed.appId,
    userId: seed.userId ?? 'u1',
    sessionId: seed.sessionId,
    sid: seed.sid ?? randomUUID(),
    subject: seed.subject ?? 'sub-of-ann',
    scopes: ['openid', 'email'],
    expiresAt: now + 14 * 86_400_000,
  });
  await store.savePayload('RefreshToken', randomUUID(), { payload: '{}', grantId: grant.grantId, expiresIn: 86_400 });
  return grant;
}

/** Clients by app id, as the app catalogue would give them. */
export function clientsOf(list: readonly Omit<LogoutClient, 'name'>[]): LogoutClients {
  const byId = new Map(list.map((client) => [client.appId, { ...client, name: `App ${client.appId}` }]));
  return {
    client: (appId) => byId.get(appId),
    withBackchannel: () => [...byId.values()].filter((client) => client.backchannelLogoutUri).map((client) => client.appId),
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * The OpenID Provider's ID-token keys of both algorithms, made with jose, their JWKS published over
 * HTTP as the OP publishes it, and the signer over them (the one the composition root builds).
 */
export interface TestKeys {
  sign: LogoutTokenSigner;
  jwksUrl: string;
  close(): Promise<void>;
}

export async function startKeys(): Promise<TestKeys> {
  const active = new Map<IdTokenAlgorithm, ActiveSigningKey>();
  const published: JWK[] = [];
  for (const alg of ['RS256', 'ES256'] as const) {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = `${alg.toLowerCase()}-${randomUUID().slice(0, 8)}`;
    active.set(alg, { kid, privateKey });
    published.push({ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' });
  }
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: published }));
  });
  const origin = await listen(server);
  return { sign: logoutTokenSigner((alg) => active.get(alg)!), jwksUrl: `${origin}/jwks`, close: () => close(server) };
}

/** A logout token the receiver accepted, with what it checked. */
export interface Received {
  path: string;
  alg: string;
  kid: string | undefined;
  aud: string;
  sub: string;
  sid: string;
  jti: string;
  lifetime: number;
}

/**
 * An app receiving back-channel logout on 127.0.0.1, verifying each logout token as an RP must
 * (Back-Channel Logout 1.0 §2.6) with jose against the OP's published keys: signature, `alg` as the
 * client registered, `typ: logout+jwt`, `iss`, `aud`, `iat`/`exp`, the event, `sid`, `jti`, no nonce.
 * `answer(n)` gives the status of its n-th request (1-based); 200 unless told.
 */
export interface LogoutReceiver {
  origin: string;
  /** Every request, in order. */
  requests: Array<{ method: string; path: string; contentType: string | undefined }>;
  accepted: Received[];
  /** Tokens that did not verify, with why. */
  rejected: string[];
  /** The raw tokens seen (to check nothing else holds them). */
  tokens: string[];
  close(): Promise<void>;
}

export async function startReceiver(options: {
  jwksUrl: string;
  issuer: string;
  /** The client id and algorithm each path's app registered. */
  clients: Record<string, { clientId: string; alg: IdTokenAlgorithm }>;
  answer?: (n: number, request: IncomingMessage) => { status: number; body?: string; headers?: Record<string, string> } | 'hang';
}): Promise<LogoutReceiver> {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl));
  const receiver: Omit<LogoutReceiver, 'origin' | 'close'> = { requests: [], accepted: [], rejected: [], tokens: [] };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const path = new URL(request.url ?? '/', 'http://x').pathname;
        receiver.requests.push({ method: request.method ?? '', path, contentType: request.headers['content-type'] });
        const n = receiver.requests.length;
        const token = new URLSearchParams(Buffer.concat(chunks).toString()).get('logout_token') ?? '';
        receiver.tokens.push(token);
        const client = options.clients[path];
        try {
          if (request.method !== 'POST' || request.headers['content-type'] !== 'application/x-www-form-urlencoded') throw new Error('not a form post');
          if (!client) throw new Error(`no client at ${path}`);
          const { payload, protectedHeader } = await jwtVerify(token, jwks, {
            issuer: options.issuer,
            audience: client.clientId,
            algorithms: [client.alg],
            typ: LOGOUT_TOKEN_TYPE,
            requiredClaims: ['iat', 'exp', 'jti', 'sub', 'sid', 'events'],
          });
          if ('nonce' in payload) throw new Error('a logout token must not hold a nonce');
          const events = payload.events as Record<string, unknown> | undefined;
          const event = events?.[BACKCHANNEL_LOGOUT_EVENT];
          if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new Error('no back-channel logout event');
          receiver.accepted.push({
            path,
            alg: protectedHeader.alg,
            kid: protectedHeader.kid,
            aud: payload.aud as string,
            sub: payload.sub!,
            sid: payload.sid as string,
            jti: payload.jti!,
            lifetime: payload.exp! - payload.iat!,
          });
        } catch (error) {
          receiver.rejected.push(error instanceof Error ? error.message : String(error));
        }
        const answer = options.answer?.(n, request) ?? { status: 200 };
        if (answer === 'hang') return;
        response.writeHead(answer.status, { 'cache-control': 'no-store', ...answer.headers });
        response.end(answer.body ?? '');
      })();
    });
  });
  const origin = await listen(server);
  return Object.assign(receiver, { origin, close: () => close(server) });
}
