import type { z } from 'zod';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Who may call a route. The server enforces it with one guard (no handler checks it again):
 * - `public`: anyone;
 * - `session`: a signed-in person (401 `unauthenticated` otherwise);
 * - `admin`: a signed-in admin (401, then 403 `forbidden`).
 * Every state-changing method on a `session` or `admin` route also needs CSRF proof: the portal's exact
 * Origin and the session-bound token in `X-CSRF-Token` (403 `csrf_failed`).
 */
export type Access = 'public' | 'session' | 'admin';

/** The OpenAPI tag a route is listed under. */
export type Tag = 'session' | 'account' | 'admin' | 'operations';

/**
 * One JSON route, written once: the server registers it from this (validation, serialisation, guard,
 * OpenAPI), and the front end takes its URL and types from it.
 *
 * `responses` lists every successful answer by status. Its schemas are allow-lists: the server strips
 * any property a schema does not name, so a token or secret cannot leave through a route by accident.
 * `null` is an answer without a body (204). Failures are always problem details (`problemSchema`).
 */
export interface RouteDefinition {
  readonly method: Method;
  /** Fastify's pattern: `/api/admin/apps/:appId`. */
  readonly path: string;
  readonly access: Access;
  readonly tag: Tag;
  readonly summary: string;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** What a success answers with when it is not JSON (a download). */
  readonly produces?: 'text/csv';
  readonly responses: { readonly [status: number]: z.ZodType | null };
}

/** Keeps a definition's literal types (its path, its schemas) for inference on both sides. */
export function defineRoute<const R extends RouteDefinition>(route: R): R {
  return route;
}

type SuccessSchema<R extends RouteDefinition> = Exclude<R['responses'][keyof R['responses']], null>;

/** What a successful answer carries (`undefined` for a 204). */
export type ResponseOf<R extends RouteDefinition> =
  | z.output<SuccessSchema<R>>
  | (null extends R['responses'][keyof R['responses']] ? undefined : never);
/** The body a client sends. */
export type BodyOf<R extends RouteDefinition> = R['body'] extends z.ZodType ? z.input<R['body']> : undefined;
/** The query a client may send. */
export type QueryOf<R extends RouteDefinition> = R['query'] extends z.ZodObject ? z.input<R['query']> : undefined;
/** The path parameters a client fills in. */
export type ParamsOf<R extends RouteDefinition> = R['params'] extends z.ZodObject ? z.input<R['params']> : undefined;

/** Query values that are undefined, null or '' are left out of a URL. */
export type QueryValues = Record<string, string | number | boolean | null | undefined>;

/** The values that are set, as search parameters. */
export function toSearchParams(values: QueryValues = {}): URLSearchParams {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, String(value));
  }
  return search;
}

/** `path?a=1&b=x`, or just `path` when no value is set (values encoded by URLSearchParams). */
export function withQuery(path: string, values: QueryValues = {}): string {
  const query = toSearchParams(values).toString();
  return query ? `${path}?${query}` : path;
}

/**
 * A pattern's parameters filled in, each percent-encoded as one path segment:
 * `fillPath('/api/admin/apps/:appId', { appId: 'a/b' })` is `/api/admin/apps/a%2Fb`. A missing parameter
 * is a programming error, not an empty segment.
 */
export function fillPath(pattern: string, params: Record<string, string> = {}): string {
  return pattern.replace(/:([A-Za-z]\w*)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${pattern}: no value for :${name}`);
    return encodeURIComponent(value);
  });
}

/** The URL a client calls for a route: its parameters filled in, its query appended. */
export function urlOf<R extends RouteDefinition>(route: R, params?: ParamsOf<R>, query?: QueryOf<R>): string {
  return withQuery(fillPath(route.path, params as Record<string, string> | undefined), query as QueryValues | undefined);
}
