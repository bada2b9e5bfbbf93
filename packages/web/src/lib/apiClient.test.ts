import { describe, expect, it } from 'vitest';
import { ApiError, isUnauthenticated, toProblem } from './apiClient';
import type { QueryClient } from '@tanstack/react-query';
import { createQueryClient, dropSessionOnUnauthenticated, shouldRetry } from './queryClient';

describe('toProblem', () => {
  it('keeps the problem+json fields the server sent', () => {
    const body = {
      type: 'https://gatehouse.dev/errors/csrf_failed',
      title: 'Request not verified',
      status: 403,
      detail: 'This request could not be verified. Reload the page.',
      code: 'csrf_failed',
      reference: '3f9a0c1b2d4e',
    };
    expect(toProblem(403, body)).toEqual(body);
  });

  it('keeps the field a problem is about', () => {
    expect(toProblem(409, { title: 'Already in use', code: 'conflict', detail: 'Another app already has the id "wiki". Choose another.', field: 'id' })).toMatchObject({ code: 'conflict', field: 'id' });
    expect(new ApiError(toProblem(409, { code: 'conflict', field: 'publicUrl' })).field).toBe('publicUrl');
  });

  it('uses the HTTP status when the body is not a problem (a proxy error page, no body)', () => {
    expect(toProblem(502, undefined)).toEqual({
      status: 502,
      title: 'Gatehouse is unavailable',
      detail: undefined,
      code: undefined,
      type: undefined,
      reference: undefined,
    });
    expect(toProblem(418, 'teapot').title).toBe('Request failed');
  });

  it('ignores fields of the wrong type', () => {
    expect(toProblem(400, { title: 42, code: ['x'] })).toMatchObject({ title: 'Bad request', code: undefined });
  });

  it('reports the response status, not the one in the body', () => {
    expect(toProblem(500, { status: 200 }).status).toBe(500);
  });
});

describe('ApiError', () => {
  it('carries the problem fields and recognises "not signed in"', () => {
    const error = new ApiError(toProblem(401, { title: 'Not signed in', code: 'unauthenticated', reference: 'r1' }));
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('Not signed in');
    expect(error.code).toBe('unauthenticated');
    expect(error.reference).toBe('r1');
    expect(isUnauthenticated(error)).toBe(true);
    expect(isUnauthenticated(new ApiError(toProblem(403, {})))).toBe(false);
    expect(isUnauthenticated(new Error('401'))).toBe(false);
  });
});

describe('shouldRetry', () => {
  const error = (status: number) => new ApiError(toProblem(status, {}));

  it('retries a lost connection and server errors, a bounded number of times', () => {
    expect(shouldRetry(0, error(0))).toBe(true);
    expect(shouldRetry(1, error(503))).toBe(true);
    expect(shouldRetry(2, error(503))).toBe(false);
  });

  it('never retries an answer that will not change (4xx) or a bug (not an ApiError)', () => {
    expect(shouldRetry(0, error(401))).toBe(false);
    expect(shouldRetry(0, error(429))).toBe(false);
    expect(shouldRetry(0, new TypeError('x is undefined'))).toBe(false);
  });
});

describe('createQueryClient onUnauthenticated', () => {
  it('reports a 401 from any query with its key, and from a mutation, but no other failure', async () => {
    const calls: unknown[] = [];
    const client = createQueryClient({ onUnauthenticated: (key) => calls.push(key) });
    const unauthenticated = () => Promise.reject(new ApiError(toProblem(401, {})));
    await client.fetchQuery({ queryKey: ['me', 'sessions'], queryFn: unauthenticated }).catch(() => undefined);
    await client.fetchQuery({ queryKey: ['other'], queryFn: () => Promise.reject(new ApiError(toProblem(404, {}))) }).catch(() => undefined);
    await client
      .getMutationCache()
      .build(client, { mutationFn: unauthenticated })
      .execute(undefined)
      .catch(() => undefined);
    expect(calls).toEqual([['me', 'sessions'], undefined]);
  });
});

describe('dropSessionOnUnauthenticated', () => {
  const session = { user: { email: 'alice@example.com' } };
  const sessionKey = ['session'] as const;

  it('drops the cached session at a 401 from another query, instead of keeping it beside the error', async () => {
    let answer: 'ok' | 'revoked' = 'ok';
    const client: QueryClient = createQueryClient({ onUnauthenticated: dropSessionOnUnauthenticated(() => client, sessionKey) });
    const sessionQuery = () => (answer === 'ok' ? Promise.resolve(session) : Promise.reject(new ApiError(toProblem(401, {}))));
    await client.fetchQuery({ queryKey: sessionKey, queryFn: sessionQuery });
    expect(client.getQueryData(sessionKey)).toEqual(session);

    // Revoked elsewhere: the next answer from the API is 401.
    answer = 'revoked';
    await client.fetchQuery({ queryKey: ['me', 'sessions'], queryFn: () => Promise.reject(new ApiError(toProblem(401, {}))) }).catch(() => undefined);
    expect(client.getQueryData(sessionKey)).toBeUndefined();
  });

  it('drops it when the session check itself says 401 while it still held data, and stops there', async () => {
    let calls = 0;
    const client: QueryClient = createQueryClient({ onUnauthenticated: dropSessionOnUnauthenticated(() => client, sessionKey) });
    client.setQueryData(sessionKey, session);
    await client
      .fetchQuery({
        queryKey: sessionKey,
        queryFn: () => {
          calls += 1;
          return Promise.reject(new ApiError(toProblem(401, {})));
        },
        staleTime: 0,
      })
      .catch(() => undefined);
    expect(client.getQueryData(sessionKey)).toBeUndefined();
    // No observer shows the session here, so nothing refetched it; and no loop either way.
    expect(calls).toBe(1);
  });
});
