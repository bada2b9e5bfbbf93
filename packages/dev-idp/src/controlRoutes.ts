import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { mediaType, readBody } from './readBody.js';
import type { UserDirectory } from './UserDirectory.js';

const BODY_LIMIT = 64 * 1024;

const ROUTE = /^\/__control\/users\/([^/]+)\/(groups|email)$/;

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * Test-only control API, mounted only when a control token is configured, so tests can change a user
 * of a dev IdP that runs as a separate process:
 *
 *   POST /__control/users/<login>/groups   Authorization: Bearer <token>   {"groups": ["staff"]}  → 204
 *   POST /__control/users/<login>/email    Authorization: Bearer <token>   {"email": "x@example.com", "emailVerified": false}  → 204
 *
 * The bearer token is compared in constant time; a custom header plus a JSON body also keep a
 * browser page from driving this cross-site.
 * The returned handler leaves paths outside `/__control/` alone and resolves to false.
 */
export function controlRoutes(token: string, users: UserDirectory) {
  const expected = digest(`Bearer ${token}`);

  return async function handleControl(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    if (!pathname.startsWith('/__control/')) return false;
    const route = ROUTE.exec(pathname);
    if (!route || req.method !== 'POST') {
      sendJson(res, 404, { error: 'not_found' });
      return true;
    }
    if (!timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      sendJson(res, 401, { error: 'invalid_token' }, { 'WWW-Authenticate': 'Bearer' });
      return true;
    }
    if (mediaType(req) !== 'application/json') {
      sendJson(res, 415, { error: 'unsupported_media_type' });
      return true;
    }
    let body: unknown;
    let login: string;
    try {
      body = JSON.parse(await readBody(req, BODY_LIMIT));
      login = decodeURIComponent(route[1]!);
    } catch {
      sendJson(res, 400, { error: 'invalid_request' });
      return true;
    }
    if (!users.has(login)) {
      sendJson(res, 404, { error: 'unknown_user' });
      return true;
    }
    if (route[2] === 'email') {
      const { email, emailVerified } = (body ?? {}) as { email?: unknown; emailVerified?: unknown };
      if (typeof email !== 'string' || email.length === 0 || email.length > 320 || typeof emailVerified !== 'boolean') {
        sendJson(res, 400, { error: 'invalid_request', error_description: 'body must be {"email": string, "emailVerified": boolean}' });
        return true;
      }
      users.setEmail(login, email, emailVerified);
      res.writeHead(204).end();
      return true;
    }
    const groups = (body as { groups?: unknown } | null)?.groups;
    if (!isStringArray(groups)) {
      sendJson(res, 400, { error: 'invalid_request', error_description: 'body must be {"groups": string[]}' });
      return true;
    }
    users.setGroups(login, groups);
    res.writeHead(204).end();
    return true;
  };
}
