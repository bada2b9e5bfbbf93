import type { CurrentSession, ProvidersResponse } from '@gatehouse/contract';
import { DEFAULT_RETURN_TO } from '@gatehouse/contract/paths';

/**
 * The sign-in page's two reads, with `fetch` itself: the page is an entry of its own and loads none of
 * the console's libraries (React Query, the contract's schemas). Same rules as the app's API client:
 * same-origin cookies only, never cached, and a failure becomes the problem's words and reference.
 */

export interface LoadFailure {
  title: string;
  detail: string;
  reference: string | undefined;
}

const ACCEPT = { Accept: 'application/json, application/problem+json' };

export class SignInPageError extends Error {
  constructor(readonly failure: LoadFailure) {
    super(failure.detail);
    this.name = 'SignInPageError';
  }
}

async function getJson(url: string, signal: AbortSignal): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { headers: ACCEPT, credentials: 'same-origin', cache: 'no-store', signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new SignInPageError({ title: 'Gatehouse could not be reached', detail: 'Check your connection and try again.', reference: undefined });
  }
  const type = response.headers.get('content-type') ?? '';
  const body: unknown = /^application\/([\w.+-]+\+)?json\b/i.test(type) ? await response.json().catch(() => undefined) : undefined;
  return { status: response.status, body };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `GET /api/providers?rd=`: the organisation, the providers, and the server's verdict on `rd`. */
export async function loadProviders(rd: string | null, signal: AbortSignal): Promise<ProvidersResponse> {
  const query = rd === null ? '' : `?rd=${encodeURIComponent(rd)}`;
  const { status, body } = await getJson(`/api/providers${query}`, signal);
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (status !== 200 || !Array.isArray(fields.providers)) {
    throw new SignInPageError({
      title: text(fields.title) ?? (status >= 500 ? 'Gatehouse is unavailable' : 'Request failed'),
      detail: text(fields.detail) ?? text(fields.title) ?? 'Something unexpected happened.',
      reference: text(fields.reference),
    });
  }
  const answer = body as ProvidersResponse;
  // What the page falls back to when the answer has no verdict: the person's own account.
  return { ...answer, returnTo: answer.returnTo ?? { href: DEFAULT_RETURN_TO, host: null, appName: null } };
}

/**
 * `GET /api/session`: who is signed in, or nobody (401 is the usual answer here, and any failure counts
 * as nobody); `ended` when the cookie's session was ended by Gatehouse (`session_ended`: the rules of
 * who may sign in no longer admit the person), with why in their words.
 */
export async function loadSession(signal: AbortSignal): Promise<{ session: CurrentSession | null; ended: LoadFailure | null }> {
  try {
    const { status, body } = await getJson('/api/session', signal);
    if (status === 200 && typeof body === 'object' && body !== null && 'user' in body) return { session: body as CurrentSession, ended: null };
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (status === 401 && fields.code === 'session_ended') {
      return { session: null, ended: { title: text(fields.title) ?? 'Session ended', detail: text(fields.detail) ?? 'Your session ended. Sign in again.', reference: text(fields.reference) } };
    }
    return { session: null, ended: null };
  } catch (error) {
    if (signal.aborted) throw error;
    return { session: null, ended: null };
  }
}
