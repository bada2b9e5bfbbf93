import { problemSchema, type Access, type RouteDefinition } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; the guard (sessions/guard.ts) enforces it before anything else runs. */
    access?: Access;
    /**
     * The CSRF proof of a state-changing request: in the `X-CSRF-Token` header (the JSON API, checked
     * with the session), or in the `csrf_token` field of an HTML form (checked once the body is read).
     */
    csrf?: 'header' | 'form';
    /** A page or form a person reaches: instead of a 401, what a signed-out browser is answered with. */
    whenSignedOut?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply;
  }
}

type Responses<R extends RouteDefinition> = {
  [Status in keyof R['responses'] as R['responses'][Status] extends null ? never : Status]: Exclude<R['responses'][Status], null>;
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
  const response: Record<string, z.ZodType> = { '4xx': problemSchema, '5xx': problemSchema };
  for (const [status, schema] of Object.entries(route.responses)) {
    // A 204 has no body to describe; a download (CSV) is not serialised as JSON.
    if (schema !== null && !route.produces) response[status] = schema;
  }
  const schema = {
    tags: [route.tag],
    summary: route.summary,
    ...(route.access === 'public' ? { security: [] as [] } : {}),
    params: route.params,
    querystring: route.query,
    body: route.body,
    response,
  } as ContractSchema<R>;
  return { method: route.method, url: route.path, schema, config: { access: route.access, csrf: 'header' as const } };
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
