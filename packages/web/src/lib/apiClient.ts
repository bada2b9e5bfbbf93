import { routes, urlOf, type BodyOf, type ParamsOf, type Problem, type QueryOf, type ResponseOf, type RouteDefinition } from '@gatehouse/contract';

/**
 * The one way the front end talks to the Gatehouse JSON API.
 *
 * - Same-origin cookies only (`credentials: 'same-origin'`): the session cookie is HttpOnly and
 *   host-only, the API lives on the portal host, and nothing is ever sent to another origin.
 * - Every state-changing request carries the session-bound CSRF token as `X-CSRF-Token`, because
 *   SameSite alone does not stop the IdPs and app hosts on loopback ports, which are same-site with
 *   the portal (PRODUCT.md, "Cookies and trust").
 * - Every failure becomes an `ApiError` carrying the problem+json fields, so the UI can show the
 *   catalogue's sentence and the reference id without knowing about HTTP.
 */

/**
 * What a failure carries. The server always answers with a whole `Problem`, but an answer that did not
 * come from it (a proxy's error page, no answer at all) has only a status and a title.
 */
export type ProblemFields = Partial<Problem> & { status: number; title: string };

/** Status used for failures where no HTTP response arrived at all. */
export const NETWORK_ERROR_STATUS = 0;

export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly title: string;
  readonly detail: string | undefined;
  readonly type: string | undefined;
  readonly reference: string | undefined;
  /** The request's field the failure is about (a `conflict` on `id` or `publicUrl`), to show it beside that field. */
  readonly field: string | undefined;

  constructor(problem: ProblemFields, options?: { cause?: unknown }) {
    super(problem.detail ?? problem.title, options);
    this.name = 'ApiError';
    this.status = problem.status;
    this.code = problem.code;
    this.title = problem.title;
    this.detail = problem.detail;
    this.type = problem.type;
    this.reference = problem.reference;
    this.field = problem.field;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

/** True for "not signed in" (401), the one failure the UI answers by going to the sign-in page. */
export function isUnauthenticated(error: unknown): boolean {
  return isApiError(error) && error.status === 401;
}

/** True for "not allowed" (403), e.g. the admin API answering someone who is not (or no longer) an admin. */
export function isForbidden(error: unknown): boolean {
  return isApiError(error) && error.status === 403;
}

const GENERIC_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Not signed in',
  403: 'Not allowed',
  404: 'Not found',
  429: 'Too many attempts',
  500: 'Something went wrong',
  502: 'Gatehouse is unavailable',
  503: 'Gatehouse is unavailable',
  504: 'Gatehouse is unavailable',
};

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Builds the problem an `ApiError` carries from whatever came back: the server's problem+json when it
 * sent one, otherwise (an HTML page from a proxy, an empty body) plain words for the status code.
 */
export function toProblem(status: number, body: unknown): ProblemFields {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const fallbackTitle = GENERIC_TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Request failed');
  return {
    status,
    title: stringField(fields.title) ?? fallbackTitle,
    detail: stringField(fields.detail),
    code: stringField(fields.code),
    type: stringField(fields.type),
    reference: stringField(fields.reference),
    field: stringField(fields.field),
  };
}

interface RequestOptions {
  signal?: AbortSignal | undefined;
}

type Method = RouteDefinition['method'];

function isJson(response: Response): boolean {
  const type = response.headers.get('content-type') ?? '';
  return /^application\/([\w.+-]+\+)?json\b/i.test(type);
}

async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204 || !isJson(response)) return undefined;
  const text = await response.text();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function send(method: Method, url: string, body: unknown, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json, application/problem+json' };
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (options.signal) init.signal = options.signal;
  if (method !== 'GET') headers['X-CSRF-Token'] = await getCsrfToken();
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(url, init);
  } catch (error) {
    // Cancellation is React Query's business, not a failure to show.
    if (options.signal?.aborted || (error instanceof DOMException && error.name === 'AbortError')) throw error;
    throw new ApiError(
      {
        status: NETWORK_ERROR_STATUS,
        code: 'network_error',
        title: 'Gatehouse could not be reached',
        detail: 'Check your connection and try again.',
      },
      { cause: error },
    );
  }
}

async function request<T>(method: Method, url: string, body: unknown, options: RequestOptions = {}): Promise<T> {
  let response = await send(method, url, body, options);
  let payload = await readBody(response);
  if (method !== 'GET' && response.status === 403 && toProblem(403, payload).code === 'csrf_failed') {
    // The token is bound to the session; after the session changed (signed in again in another tab)
    // the cached one is stale. Fetch a fresh one and try exactly once more.
    forgetCsrfToken();
    response = await send(method, url, body, options);
    payload = await readBody(response);
  }
  if (!response.ok) throw new ApiError(toProblem(response.status, payload));
  return payload as T;
}

/** What a route needs besides itself: its path parameters and its body, when it has them. */
type Needs<R extends RouteDefinition> = (ParamsOf<R> extends undefined ? unknown : { params: ParamsOf<R> }) &
  (BodyOf<R> extends undefined ? unknown : { body: BodyOf<R> });

export type CallOptions<R extends RouteDefinition> = Needs<R> & {
  /** Values that are undefined, null or '' are left out of the URL. */
  query?: QueryOf<R>;
  signal?: AbortSignal | undefined;
};

/**
 * Calls a route of the contract: its method, its path with `params` filled in, `query` appended, and
 * `body` as JSON (never for a GET). Resolves with the success answer (`undefined` for a 204).
 */
export function callApi<R extends RouteDefinition>(
  route: R,
  ...[options]: object extends Needs<R> ? [options?: CallOptions<R>] : [options: CallOptions<R>]
): Promise<ResponseOf<R>> {
  const { params, query, body, signal } = (options ?? {}) as { params?: ParamsOf<R>; query?: QueryOf<R>; body?: unknown; signal?: AbortSignal };
  const url = urlOf(route, params, query);
  return request<ResponseOf<R>>(route.method, url, route.method === 'GET' ? undefined : body, { signal });
}

let csrfToken: Promise<string> | undefined;

/**
 * The CSRF token bound to the current session (`GET /api/csrf`, 401 when signed out), fetched once per
 * page load and shared by `callApi` (the `X-CSRF-Token` header) and HTML forms (the `csrf_token`
 * field, see `useCsrfToken`). Signing in or out is a full page load, which starts a fresh cache.
 */
export function getCsrfToken(): Promise<string> {
  if (csrfToken) return csrfToken;
  const pending = callApi(routes.session.getCsrfToken).then((body) => {
    if (typeof body?.csrfToken !== 'string' || body.csrfToken.length === 0) {
      throw new ApiError({ status: 500, title: 'Something went wrong', detail: 'The server sent no CSRF token.' });
    }
    return body.csrfToken;
  });
  csrfToken = pending;
  // A failed fetch must not poison the cache: the next caller tries again.
  pending.catch(() => {
    if (csrfToken === pending) csrfToken = undefined;
  });
  return csrfToken;
}

/** Drops the cached token so the next state-changing request fetches a fresh one. */
export function forgetCsrfToken(): void {
  csrfToken = undefined;
}
