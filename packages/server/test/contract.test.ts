import { randomBytes } from 'node:crypto';
import { allRoutes, defineRoute, routes } from '@gatehouse/contract';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { contractRoute, NOT_JSON_ROUTES, requireContract, typed, useZodSchemas } from '../src/http/contract.js';
import { createServices, type Services } from '../src/services.js';

/**
 * The API contract is the server's: every JSON route is registered from it (and so answers through its
 * response schemas, which are allow-lists), and a JSON route registered any other way stops the start.
 */
/** The portal answers at publicUrl's host only (http/canonicalHost.ts); inject's default Host is localhost:80. */
const PORTAL_HOST = { host: 'localhost:4180' };

describe('the whole server against the contract', () => {
  let services: Services;
  let app: FastifyInstance;
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

  beforeAll(async () => {
    const config = parseConfig(
      {
        publicUrl: 'http://localhost:4180',
        dataDir: '.',
        database: { path: ':memory:' },
        secrets: { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k', key: randomBytes(32).toString('base64url') }] },
        providers: [{ id: 'dev', name: 'Dev', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' }],
      },
      { env: {} },
    );
    const log = pino({ enabled: false });
    process.on('warning', onWarning);
    services = await createServices(config, log);
    app = await buildApp(services, { loggerInstance: log });
    await app.ready();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
  });
  afterAll(async () => {
    await app?.close();
    await services?.close();
  });

  it('starts without a framework warning (a schema part left undefined, say)', () => {
    expect(warnings.filter((warning) => warning.startsWith('FastifyWarning'))).toEqual([]);
  });

  it('registers every route of the contract, at its method and path', () => {
    const missing = allRoutes.filter((route) => !app.hasRoute({ method: route.method, url: route.path }));
    expect(missing.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  it('describes every JSON answer of the contract in the OpenAPI document (from the same schemas)', async () => {
    const document = (await app.inject({ method: 'GET', headers: PORTAL_HOST, url: '/api/docs' })).json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
    for (const route of allRoutes.filter((candidate) => candidate.path.startsWith('/api/'))) {
      const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[openApiPath]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      for (const status of Object.keys(route.responses)) expect(operation!.responses[status], `${route.method} ${route.path} ${status}`).toBeDefined();
    }
  });

  it('keeps JSON answers out of every cache, unless the route says otherwise (the JWKS)', async () => {
    for (const url of ['/healthz', '/readyz', '/api/providers']) {
      expect((await app.inject({ method: 'GET', headers: PORTAL_HOST, url })).headers['cache-control'], url).toBe('no-store');
    }
    expect((await app.inject({ method: 'GET', headers: PORTAL_HOST, url: '/api/session' })).headers['cache-control']).toBe('no-store');
    expect((await app.inject({ method: 'GET', headers: PORTAL_HOST, url: '/.gatehouse/jwks.json' })).headers['cache-control']).toBe('public, max-age=300');
  });

  it('gives every success answer of the contract a schema, or declares it bodiless (204) or a download', () => {
    for (const route of allRoutes) {
      for (const [status, schema] of Object.entries(route.responses)) {
        if (schema === null) expect(status, `${route.method} ${route.path}`).toBe('204');
        else expect(schema, `${route.method} ${route.path} ${status}`).toBeInstanceOf(z.ZodType);
      }
    }
  });
});

describe('the leak guard', () => {
  const bare = async () => {
    const app = Fastify({ logger: false });
    useZodSchemas(app);
    requireContract(app);
    return app;
  };

  // Threat: a JSON route added by hand, whose answer nothing filters, sending out a token or a secret.
  it.each(['/api/admin/export', '/api', '/.gatehouse/session', '/readyz', '/oidc/export', '/.well-known/gatehouse'])('refuses a JSON route registered outside the contract at %s', async (url) => {
    const app = await bare();
    expect(() => app.get(url, async () => ({ ok: true }))).toThrow(/not in the contract/);
  });

  it('accepts the listed non-JSON endpoints and routes outside /api and /.gatehouse', async () => {
    const app = await bare();
    for (const key of Object.keys(NOT_JSON_ROUTES)) {
      const [method, url] = key.split(' ') as [string, string];
      if (method === '*') app.all(url, async () => '');
      else app.route({ method: method as 'GET', url, handler: async () => '' });
    }
    app.get('/account', async () => 'page');
    await app.ready();
  });

  it('sends only what a response schema names: a field the handler adds never leaves', async () => {
    const app = await bare();
    const route = defineRoute({
      method: 'GET',
      path: '/api/probe',
      access: 'public',
      tag: 'session',
      summary: 'probe',
      responses: { 200: z.object({ id: z.string(), nested: z.object({ name: z.string() }) }) },
    });
    typed(app).route({
      ...contractRoute(route),
      // A handler that returns more than it should (a row straight from the database, say).
      handler: async () => ({ id: 'a', secret_hash: 'x', nested: { name: 'n', refreshToken: 'y' } }) as { id: string; nested: { name: string } },
    });
    const answer = await app.inject({ method: 'GET', headers: PORTAL_HOST, url: '/api/probe' });
    expect(answer.json()).toEqual({ id: 'a', nested: { name: 'n' } });
  });

  it('registers the session routes with the guard the contract declares', () => {
    expect(contractRoute(routes.session.getProviders).config.access).toBe('public');
    expect(contractRoute(routes.me.revokeMySession).config.access).toBe('session');
    expect(Object.values(routes.admin).every((route) => contractRoute(route).config.access === 'admin')).toBe(true);
  });
});
