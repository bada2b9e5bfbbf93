import { API_PREFIX, OIDC_PREFIX, problemSchema, RESERVED_PREFIX, type RouteDefinition } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

/** The contract's answers as Fastify's response schemas: `null` (no body) becomes an empty one. */
type Responses<R extends RouteDefinition> = {
  [Status in keyof R['responses']]: R['responses'][Status] extends null ? z.ZodNull : R['responses'][Status];
} & { '4xx': typeof problemSchema; '5xx': typeof problemSchema };

/** A route's Fastify schema, typed from the contract so the zod type provider infers its handler's types. */
interface ContractSchema<R extends RouteDefinition> {
  tags: string[];
  summary: string;
  security?: [];
  params: R['params'] extends z.ZodType ? R['params'] : undefined;
  querystring: R['query'] extends z.ZodType ? R['query'] : undefined;
  body: R['body'] extends z.ZodType ? R['body'] : undefined;
  response: Responses<R>;
}

/**
 * Registers a route as the contract defines it: method, path, guard, validation of params, query and
 * body, and serialisation through its response schemas (allow-lists: a property they do not name is
 * dropped). The handler is the only thing the server writes.
 */
export function contractRoute<const R extends RouteDefinition>(route: R) {
  // Failures are problem details, written by the error handler (http/errorHandler.ts); described here.
  const problem = { content: { 'application/problem+json': { schema: problemSchema } } };
  const response: Record<string, unknown> = { '4xx': problem, '5xx': problem };
  for (const [status, schema] of Object.entries(route.responses)) {
    // A 204 has no body (the handler sends none, so nothing is serialised); a download is described
    // with its own media type.
    response[status] = schema === null ? z.null() : route.produces ? { content: { [route.produces]: { schema } } } : schema;
  }
  // Only the parts the route has: Fastify warns at start about a schema key left undefined.
  const schema = {
    tags: [route.tag],
    summary: route.summary,
    ...(route.access === 'public' ? { security: [] as [] } : {}),
    ...(route.params ? { params: route.params } : {}),
    ...(route.query ? { querystring: route.query } : {}),
    ...(route.body ? { body: route.body } : {}),
    response,
  } as unknown as ContractSchema<R>;
  return { method: route.method, url: route.path, schema, config: { access: route.access, csrf: 'header' as const, contract: route }, onSend: notCached };
}

/**
 * A JSON answer is about this request's person and this moment: no cache keeps it, unless the route
 * says otherwise itself (the JWKS, cached for five minutes).
 */
async function notCached(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract definition the route was registered from (contractRoute). */
    contract?: RouteDefinition;
  }
}

/**
 * The routes under /api, /.gatehouse and the health checks that are not JSON routes, and why. Every
 * other route there must come from the contract, and so answer through its response schemas: a JSON
 * route registered by hand — whose answer nothing filters — stops the server from starting. This list
 * is the leak guard: adding to it is a decision a reviewer sees.
 */
export const NOT_JSON_ROUTES: Readonly<Record<string, string>> = {
  'GET /.gatehouse/sign-in/:providerId': 'redirects the browser to the IdP',
  'GET /.gatehouse/callback/:providerId': 'redirects the browser to where the sign-in returns',
  'POST /.gatehouse/sign-out': 'an HTML form; redirects to the IdP or /signed-out',
  'GET /.gatehouse/sign-out': '405: signing out is a POST',
  'POST /.gatehouse/switch-account': "an HTML form on an app host's 403 page; ends the session and redirects to the portal",
  'GET /.gatehouse/switch-account': 'redirects to the sign-in page, whose next sign-in asks the IdP to let the person choose',
  'POST /.gatehouse/link/:providerId': 'an HTML form; redirects to the IdP',
  'POST /.gatehouse/test-sign-in/:providerId': 'an HTML form; redirects to the IdP or the result page',
  'POST /.gatehouse/backchannel-logout/:providerId': 'called by the IdP: an empty 200, or the fixed OAuth error of Back-Channel Logout §2.8',
  'GET /.gatehouse/auth': 'forward-auth: the answer is the status and identity headers, never a body to read',
  'GET /.gatehouse/auth/:appId': 'forward-auth: the answer is the status and identity headers',
  'GET /.gatehouse/forward-auth': 'forward-auth: status, identity headers or a redirect to sign in',
  'GET /.gatehouse/forward-auth/:appId': 'forward-auth: status, identity headers or a redirect to sign in',
  'GET /.gatehouse/app-authorize': 'the app-host handshake: redirects with a one-time code',
  'GET /.gatehouse/start': 'the app-host handshake: redirects to the portal',
  'GET /.gatehouse/complete': 'the app-host handshake: sets the app cookie and redirects',
  'GET /api/docs': 'the OpenAPI document, generated from the contract',
  '* /.gatehouse/*': "the app host's 404 for its reserved prefix",
  // The OpenID Provider (provide/): oidc-provider answers as OpenID Connect and OAuth 2.0 define (their
  // JSON, their errors, their redirects); test/integration/openIdProvider.test.ts checks that none of it carries a secret.
  '* /oidc/*': 'the OpenID Provider: OAuth 2.0 / OpenID Connect answers, as their specifications define them',
  '* /.well-known/openid-configuration': 'OpenID Connect Discovery 1.0: the OpenID Provider’s metadata',
  'GET /oidc/interaction/:uid': 'the OpenID Provider’s login step: redirects to sign in, back to the app, or a page',
};

function inScope(url: string): boolean {
  return (
    url === API_PREFIX ||
    url.startsWith(`${API_PREFIX}/`) ||
    url.startsWith(`${RESERVED_PREFIX}/`) ||
    url === '/healthz' ||
    url === '/readyz' ||
    url.startsWith(`${OIDC_PREFIX}/`) ||
    url.startsWith('/.well-known/')
  );
}

/**
 * Refuses, at registration, a route under /api, /.gatehouse or the health checks that neither comes
 * from the contract nor is listed in NOT_JSON_ROUTES (HEAD routes Fastify adds for GETs follow theirs).
 */
export function requireContract(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!inScope(route.url) || route.config?.contract) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((method) => method === 'HEAD')) return;
    const listed = methods.every((method) => NOT_JSON_ROUTES[`${method} ${route.url}`]) || (methods.length > 1 && NOT_JSON_ROUTES[`* ${route.url}`]);
    if (!listed) throw new Error(`${methods.join(',')} ${route.url} is not in the contract: define it there (packages/contract), or list it in NOT_JSON_ROUTES with the reason it answers no JSON`);
  });
}

/** Validation and serialisation by zod schemas, for every route of a Fastify instance (the portal, the app host). */
export function useZodSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
}

/** The instance, seen through the zod type provider (useZodSchemas installs the compilers). */
export function typed(app: FastifyInstance) {
  return app.withTypeProvider<ZodTypeProvider>();
}

/** A 204: the contract declares such answers `null` (no body), so there is nothing to serialise. */
export function noContent(reply: { code(status: 204): { send(): unknown } } | FastifyReply) {
  return (reply as FastifyReply).code(204).send();
}

/** A route's query once validated (defaults applied), as its handler sees it. */
export type ContractQuery<R extends RouteDefinition> = R['query'] extends z.ZodType ? z.output<R['query']> : undefined;
